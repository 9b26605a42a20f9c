#!/bin/sh
# Build the ksched container image with buildah (Debian's package: no
# daemon, no registry). The image is made from scratch out of this
# machine's files: the release binary, the example plugins, every shared
# library they need (ksched links libyaml, jansson and PCRE2 and loads libcurl,
# OpenSSL and libevent on first use, so those are listed by hand and
# their own dependencies found with ldd), glibc's NSS modules for DNS
# (kubernetes.default.svc), CA certificates and a non-root user.
#
#   deploy/image.sh [OUT]    OUT defaults to build/ksched-image.tar
#
# OUT is an OCI archive: `podman load -i OUT`, `skopeo copy
# oci-archive:OUT docker://REGISTRY/ksched:TAG`, or `kind load
# image-archive OUT`. The image is tagged ksched:latest, as
# deploy/deployment.yaml expects.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/build/ksched-image.tar}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac

command -v buildah >/dev/null 2>&1 || {
    echo "deploy/image.sh: buildah is not installed (apt-get install buildah)" >&2
    exit 2
}
make -C "$here" --no-print-directory MODE=release build >/dev/null
bin=$here/build/release/ksched

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT INT TERM

# A library by soname, as the dynamic loader would find it.
lib_path() {
    ldconfig -p | awk -v n="$1" '$1 == n && /x86-64|x32|AArch64|64bit/ { print $NF; exit }
                                 $1 == n { p = $NF } END { if (p) print p }' | head -n 1
}

# Copy a file and the libraries it needs, keeping their paths.
add_with_deps() {
    for f in "$1" $(ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
        [ -e "$root$f" ] && continue
        mkdir -p "$root$(dirname "$f")"
        cp -L "$f" "$root$f"
    done
}

mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/ksched/plugins" "$root/etc/ssl/certs" \
         "$root/tmp" "$root/etc/ksched"
chmod 1777 "$root/tmp"
cp "$bin" "$root/usr/local/bin/ksched"
add_with_deps "$bin"
for so in "$here"/build/release/plugins/*.so; do
    [ -e "$so" ] || continue
    cp "$so" "$root/usr/local/lib/ksched/plugins/"
    add_with_deps "$so"
done
for name in libcurl.so.4 libssl.so.3 libevent_extra-2.1.so.7 libevent_openssl-2.1.so.7 \
            libevent_pthreads-2.1.so.7 libnss_dns.so.2 libnss_files.so.2 libresolv.so.2; do
    p=$(lib_path "$name")
    if [ -z "$p" ]; then
        echo "deploy/image.sh: $name not found (scripts/deps.sh installs the runtime libraries)" >&2
        exit 2
    fi
    add_with_deps "$p"
done
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
printf 'root:x:0:0::/root:/sbin/nologin\nksched:x:65532:65532::/nonexistent:/sbin/nologin\n' \
    >"$root/etc/passwd"
printf 'root:x:0:\nksched:x:65532:\n' >"$root/etc/group"
printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"

sd="--storage-driver vfs"
ctr=$(buildah $sd from scratch)
cleanup_ctr() { buildah $sd rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$root"; }
trap cleanup_ctr EXIT INT TERM
buildah $sd copy "$ctr" "$root" / >/dev/null
version=$("$bin" --version 2>/dev/null | head -n 1 || echo unknown)
buildah $sd config \
    --env PATH=/usr/local/bin \
    --user 65532:65532 \
    --workingdir / \
    --entrypoint '[]' --cmd '["ksched", "run"]' \
    --port 10259/tcp \
    --label org.opencontainers.image.title=ksched \
    --label "org.opencontainers.image.version=$version" \
    "$ctr"
rm -f "$out"
mkdir -p "$(dirname "$out")"
buildah $sd commit --quiet --format oci "$ctr" "oci-archive:$out:ksched:latest" >/dev/null
echo "deploy/image.sh: wrote $out ($(du -h "$out" | cut -f1), ksched:latest)"

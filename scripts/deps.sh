#!/bin/sh
# Install the Debian packages ksched needs to build and test, only if missing.
# Idempotent: when everything is present it does nothing and prints nothing.
#   scripts/deps.sh        what make, make test need (buildah: the image test)
#   scripts/deps.sh fuzz   the same plus clang and libFuzzer (make fuzz)
#   scripts/deps.sh coverage   the same plus gcovr (make coverage)
set -eu
PKGS="gcc g++ make pkg-config libyaml-dev libjansson-dev libpcre2-dev libcurl4-openssl-dev libmicrohttpd-dev libssl-dev libnghttp2-dev libevent-dev libcmocka-dev zlib1g-dev python3 python3-prometheus-client buildah"
[ "${1:-}" = fuzz ] && PKGS="$PKGS clang libclang-rt-dev"
[ "${1:-}" = coverage ] && PKGS="$PKGS gcovr"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

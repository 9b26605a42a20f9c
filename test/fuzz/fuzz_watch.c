/* Watch streams, as the reflector reads them (src/kube/reflector.c): the
 * bytes after the first four are a watch response body, delivered in
 * chunks whose sizes the first four bytes choose; objects are split out
 * with ks_json_split_next, the buffer compacted after each chunk as the
 * reflector does, and each event parsed and its object decoded by its kind. The
 * objects and garbage lines found must be the same whether the stream
 * comes in one piece or in chunks. */
#include "fuzz.h"

#include "codec/decode.h"
#include "kube/jsonsplit.h"
#include "util/log.h"
#include "util/strbuf.h"

typedef struct {
    char **v;
    size_t n;
} found;

static void add(found *f, ks_split_result r, const char *s, size_t n) {
    f->v = realloc(f->v, (f->n + 1) * sizeof(*f->v));
    char *x = malloc(n + 2);
    x[0] = r == KS_SPLIT_OBJECT ? 'O' : 'G';
    memcpy(x + 1, s, n);
    x[n + 1] = 0;
    f->v[f->n++] = x;
}

/* Split the stream fed in chunks (max_chunk 0: in one piece). */
static void split(const uint8_t *data, size_t size, uint32_t seed, size_t max_chunk, found *out) {
    ks_strbuf pend;
    ks_sb_init(&pend);
    ks_json_splitter sp = {0};
    size_t off = 0;
    while (off < size) {
        size_t n = size - off;
        if (max_chunk) {
            seed = seed * 1103515245u + 12345u;
            size_t c = 1 + (seed >> 16) % max_chunk;
            if (c < n) n = c;
        }
        ks_sb_putn(&pend, (const char *)data + off, n);
        off += n;
        size_t os, oe;
        ks_split_result r;
        while ((r = ks_json_split_next(ks_sb_str(&pend), pend.len, &sp, &os, &oe)) != KS_SPLIT_NONE) {
            FZ_CHECK(os <= oe && oe <= pend.len, "split out of range");
            add(out, r, pend.s + os, oe - os);
        }
        size_t keep = ks_json_split_consumed(&sp);
        FZ_CHECK(keep <= pend.len, "consumed past the end");
        if (keep) {
            memmove(pend.s, pend.s + keep, pend.len - keep);
            pend.len -= keep;
            pend.s[pend.len] = 0;
        }
    }
    ks_sb_free(&pend);
}

static void decode_event(const char *text, size_t len) {
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (kt_parse(a, "watch event", text, len, &docs, &n, &err) && n == 1 && docs[0]->type == KT_MAP) {
        const ks_tree *obj = kt_get(docs[0], "object");
        const ks_tree *kind = kt_get(obj, "kind");
        ks_errors errs;
        ks_errors_init(&errs);
        ks_decode_ctx ctx = {.file = "watch", .errs = &errs};
        if (kind && kind->type == KT_STRING && !strcmp(kind->text, "Pod")) {
            ks_pod *p = ks_decode_pod(obj, &ctx);
            if (p) ks_pod_unref(p);
        } else if (kind && kind->type == KT_STRING && !strcmp(kind->text, "Node")) {
            ks_node *nd = ks_decode_node(obj, &ctx);
            if (nd) ks_node_unref(nd);
        } else if (obj && obj->type == KT_MAP) {
            /* the other kinds (DRA objects, volumes, ...) by their kind */
            ks_cluster *c = ks_cluster_new();
            ks_decode_document(c, obj, &ctx);
            ks_cluster_free(c);
        }
        ks_errors_free(&errs);
    }
    free(err);
    ks_arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    if (size < 4) return 0;
    uint32_t seed = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16;
    size_t max_chunk = 1 + data[3];
    data += 4;
    size = size - 4;
    found whole = {0}, chunked = {0};
    split(data, size, 0, 0, &whole);
    split(data, size, seed, max_chunk, &chunked);
    FZ_CHECK(whole.n == chunked.n, "%zu pieces whole, %zu in chunks of at most %zu", whole.n, chunked.n,
             max_chunk);
    for (size_t i = 0; i < whole.n; i++) {
        FZ_CHECK(strcmp(whole.v[i], chunked.v[i]) == 0, "piece %zu differs in chunks of at most %zu", i,
                 max_chunk);
        if (whole.v[i][0] == 'O' && i < 16) decode_event(whole.v[i] + 1, strlen(whole.v[i] + 1));
    }
    for (size_t i = 0; i < whole.n; i++) free(whole.v[i]);
    for (size_t i = 0; i < chunked.n; i++) free(chunked.v[i]);
    free(whole.v);
    free(chunked.v);
    return 0;
}

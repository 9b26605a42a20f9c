/* Protocol Buffers answers of the API server (codec/pb.h), as the
 * reflector reads them: the first byte chooses the reader, the rest is
 * the body. 0: one object; 1: a list, item by item; 2: a watch stream of
 * length-prefixed frames. Every object read is decoded by its kind, as
 * the run-mode backend does. A malformed object is refused with a
 * message (and the list goes on with the next item); nothing crashes,
 * leaks or loops. */
#include "fuzz.h"

#include "codec/decode.h"
#include "codec/pb.h"
#include "util/log.h"

static void decode_object(ks_cluster *c, const ks_tree *obj, ks_decode_ctx *ctx) {
    const ks_tree *k = kt_get(obj, "kind");
    if (!k || k->type != KT_STRING) return;
    if (!strcmp(k->text, "Pod")) {
        ks_pod *p = ks_decode_pod(obj, ctx);
        if (p) KS_VEC_PUSH(c->pods, p);
    } else if (!strcmp(k->text, "Node")) {
        ks_node *n = ks_decode_node(obj, ctx);
        if (n) KS_VEC_PUSH(c->nodes, n);
    } else {
        ks_decode_document(c, obj, ctx);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    if (size < 1) return 0;
    unsigned which = data[0] % 3;
    const uint8_t *body = data + 1;
    size_t len = size - 1;
    ks_arena *a = ks_arena_new(0);
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx ctx = {.file = "response", .errs = &errs};
    char *err = NULL;
    ks_tree *t = NULL;
    if (which == 0) {
        bool ok = ks_pb_decode_object(a, body, len, &t, &err);
        FZ_CHECK(ok == (err == NULL), "object: %d with%s a message", ok, err ? "" : "out");
        FZ_CHECK(ok || *err, "object: an empty message");
        if (ok) decode_object(c, t, &ctx);
    } else if (which == 1) {
        /* a list as the reflector reads it while it arrives: the bytes
         * handed over in pieces of a size the input chooses */
        size_t step = 1 + (size_t)(data[0] / 3) % 64;
        ks_pb_list_reader lr = {0};
        char kind[64] = "";
        size_t off = 0, have = step < len ? step : len;
        uint32_t seen = 0;
        for (;;) {
            size_t used;
            ks_tree *out;
            int k = ks_pb_list_read(&lr, a, body + off, have - off, &used, &out, &err);
            off += used;
            FZ_CHECK(off <= have, "list: %zu bytes consumed of %zu", off, have);
            FZ_CHECK((k == KS_PB_BAD_ITEM || k == KS_PB_ERROR) == (err != NULL), "list: %d with%s a message", k,
                     err ? "" : "out");
            FZ_CHECK(!err || *err, "list: an empty message");
            free(err);
            err = NULL;
            if (k == KS_PB_MORE) {
                if (have == len) break; /* cut short */
                have = have + step < len ? have + step : len;
            } else if (k == KS_PB_ROOT) {
                const ks_tree *lk = kt_get(out, "kind");
                size_t l = lk ? strlen(lk->text) : 0;
                if (l > 4 && l < sizeof(kind)) memcpy(kind, lk->text, l - 4);
            } else if (k == KS_PB_ITEM || k == KS_PB_BAD_ITEM) {
                FZ_CHECK(++seen <= len, "list: more items than bytes");
                if (k == KS_PB_ITEM) {
                    kt_map_set(a, out, "kind", kt_string(a, kind, 0));
                    decode_object(c, out, &ctx);
                }
            } else {
                break; /* the end, not a list, or a broken list */
            }
        }
    } else {
        size_t off = 0;
        int64_t fl;
        while ((fl = ks_pb_frame_len(body + off, len - off)) >= 0 && (size_t)fl <= len - off - 4) {
            if (ks_pb_decode_watch_event(a, body + off + 4, (size_t)fl, &t, &err)) {
                const ks_tree *o = kt_get(t, "object");
                if (o) decode_object(c, o, &ctx);
            } else {
                FZ_CHECK(err && *err, "watch: refused without a message");
            }
            free(err);
            err = NULL;
            off += 4 + (size_t)fl;
        }
    }
    free(err);
    char *e = NULL;
    ks_cluster_admit(c, &e);
    free(e);
    ks_errors_free(&errs);
    ks_cluster_free(c);
    ks_arena_free(a);
    return 0;
}

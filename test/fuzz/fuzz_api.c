/* API server responses, as the run-mode client receives them: a list
 * ({kind: PodList, items: [...]}, with metadata.continue and
 * resourceVersion) or a stream of watch events ({"type": "ADDED",
 * "object": {...}} one after the other, BOOKMARK and ERROR included). The
 * JSON parser is forced; every object is decoded without its document
 * kept (the client's way), by the kind the list or the object names.
 * (Replaced by the reflector's own stream parser once it lands.) */
#include "fuzz.h"

#include "codec/decode.h"
#include "codec/tree_internal.h"
#include "util/log.h"

static void decode_object(ks_cluster *c, const ks_tree *obj, const char *list_kind,
                          ks_decode_ctx *ctx) {
    const ks_tree *k = kt_get(obj, "kind");
    const char *kind = k && k->type == KT_STRING ? k->text : list_kind;
    if (!kind) return;
    if (!strcmp(kind, "Pod")) {
        ks_pod *p = ks_decode_pod(obj, ctx);
        if (p) KS_VEC_PUSH(c->pods, p);
    } else if (!strcmp(kind, "Node")) {
        ks_node *n = ks_decode_node(obj, ctx);
        if (n) KS_VEC_PUSH(c->nodes, n);
    } else {
        /* the other kinds through the generic dispatch */
        ks_decode_document(c, obj, ctx);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (!kt_parse_json(a, "response", (const char *)data, size, &docs, &n, &err)) {
        free(err);
        ks_arena_free(a);
        return 0;
    }
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx ctx = {.file = "response", .errs = &errs};
    for (uint32_t i = 0; i < n; i++) {
        const ks_tree *d = docs[i];
        const ks_tree *items = kt_get(d, "items");
        const ks_tree *type = kt_get(d, "type");
        const ks_tree *obj = kt_get(d, "object");
        if (items && items->type == KT_SEQ) {
            const ks_tree *lk = kt_get(d, "kind");
            char kind[256] = "";
            if (lk && lk->type == KT_STRING) {
                size_t l = strlen(lk->text);
                if (l > 4 && l < sizeof(kind) && !strcmp(lk->text + l - 4, "List")) {
                    memcpy(kind, lk->text, l - 4);
                    kind[l - 4] = 0;
                }
            }
            /* Pods and nodes one by one (the reflector's way); other lists
             * (DRA objects, volumes, ...) through the manifest decoder,
             * which gives each item the list's kind */
            if (!strcmp(kind, "Pod") || !strcmp(kind, "Node"))
                for (uint32_t j = 0; j < items->n; j++) decode_object(c, items->items[j], kind, &ctx);
            else
                ks_decode_document(c, d, &ctx);
        } else if (type && type->type == KT_STRING && obj && obj->type == KT_MAP) {
            if (strcmp(type->text, "ERROR") != 0 && strcmp(type->text, "BOOKMARK") != 0)
                decode_object(c, obj, NULL, &ctx);
        }
    }
    char *e = NULL;
    ks_cluster_admit(c, &e);
    free(e);
    ks_errors_free(&errs);
    ks_cluster_free(c);
    ks_arena_free(a);
    return 0;
}

/* Label and field selectors: a document
 *     {selector: <LabelSelector>, map: <map selector>,
 *      nodeSelector: <NodeSelector>, labels: {k: v}, name: <node name>}
 * (YAML or JSON) is decoded as the pod and PDB decoders decode these
 * fields (requirements, operators, values, Gt/Lt integers, matchFields on
 * metadata.name), then every selector is matched against the labels. */
#include "fuzz.h"

#include "api/selector.h"
#include "codec/decode_internal.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (!kt_parse(a, "fuzz", (const char *)data, size, &docs, &n, &err)) {
        free(err);
        ks_arena_free(a);
        return 0;
    }
    ks_errors errs;
    ks_errors_init(&errs);
    for (uint32_t i = 0; i < n && i < 4; i++) {
        const ks_tree *t = docs[i];
        ks_decode_ctx ctx = {.file = "fuzz", .errs = &errs};
        dec d;
        ks_arena *oa = ks_arena_new(0);
        dec_init(&d, &ctx, oa, "selector", t);
        ks_label_selector ls, ms;
        ks_node_selector ns;
        ks_labels labels;
        memset(&labels, 0, sizeof(labels));
        bool ok_ls = d_label_selector(&d, kt_get(t, "selector"), KP(NULL, "selector"), &ls);
        bool ok_ms = d_map_selector(&d, kt_get(t, "map"), KP(NULL, "map"), &ms);
        bool ok_ns = d_node_selector(&d, kt_get(t, "nodeSelector"), KP(NULL, "nodeSelector"), &ns);
        bool ok_l = d_labels(&d, kt_get(t, "labels"), KP(NULL, "labels"), &labels);
        ks_id name = d_id(&d, kt_get(t, "name"), KP(NULL, "name"));
        bool failed = !dec_done(&d);
        FZ_CHECK(!failed || errs.n > 0, "failed without a message");
        if (!ok_l) memset(&labels, 0, sizeof(labels));
        if (ok_ls) (void)ks_selector_matches(&ls, &labels);
        if (ok_ms) (void)ks_selector_matches(&ms, &labels);
        if (ok_ns) (void)ks_node_selector_matches(&ns, &labels, name);
        for (uint32_t r = 0; ok_ls && r < ls.nreq; r++) (void)ks_requirement_matches(&ls.reqs[r], &labels);
        ks_arena_free(oa);
    }
    ks_errors_free(&errs);
    ks_arena_free(a);
    return 0;
}

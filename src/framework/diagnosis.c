#include "framework/diagnosis.h"
#include "framework/status.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void ks_diagnosis_init(ks_diagnosis *d) {
    memset(d, 0, sizeof(*d));
    ks_node_status_map_init(&d->statuses);
}

void ks_diagnosis_free(ks_diagnosis *d) {
    ks_node_status_map_clear(&d->statuses);
    free(d->pre_filter_msg);
    free(d->post_filter_msg);
    memset(d, 0, sizeof(*d));
}

void ks_diagnosis_add_plugin_status(ks_diagnosis *d, const ks_framework *fw, const ks_status *s) {
    if (!s || !s->plugin || !*s->plugin) return;
    int i = ks_framework_plugin_index(fw, s->plugin);
    if (i < 0) return;
    if (ks_code_is_rejected(s->code)) ks_plugin_mask_add(&d->unschedulable_plugins, (unsigned)i);
    if (s->code == KS_PENDING) ks_plugin_mask_add(&d->pending_plugins, (unsigned)i);
}

/* Reason histogram: reason text -> number of nodes. */
typedef struct reason_count {
    const char *reason;
    size_t count;
} reason_count;

static void count_reason(reason_count **v, size_t *n, size_t *cap, const char *reason, size_t add) {
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*v)[i].reason, reason) == 0) {
            (*v)[i].count += add;
            return;
        }
    }
    KS_GROW(*v, *cap, *n + 1);
    (*v)[(*n)++] = (reason_count){reason, add};
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *ks_fit_error_message(const ks_fit_error *fe) {
    const ks_diagnosis *d = &fe->diagnosis;
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_printf(&b, KS_NO_NODE_AVAILABLE_FMT ":", fe->num_all_nodes);
    if (d->pre_filter_msg && *d->pre_filter_msg) {
        /* PreFilter rejected the pod: every node got the same status, so
         * the per-node reasons would only repeat it. */
        ks_sb_printf(&b, " %s.", d->pre_filter_msg);
    } else {
        reason_count *v = NULL;
        size_t n = 0, cap = 0;
        const ks_node_status_map *m = &d->statuses;
        for (uint32_t i = 0; i < m->n; i++) {
            const ks_status *s = m->v[i].status;
            for (uint32_t r = 0; s && r < s->nreasons; r++) count_reason(&v, &n, &cap, s->reasons[r], 1);
        }
        if (m->n < fe->num_all_nodes) {
            const ks_status *abs = ks_node_status_map_absent_status(m);
            for (uint32_t r = 0; r < abs->nreasons; r++)
                count_reason(&v, &n, &cap, abs->reasons[r], fe->num_all_nodes - m->n);
        }
        if (n) {
            char **strs = ks_xmalloc(n * sizeof(char *));
            for (size_t i = 0; i < n; i++) strs[i] = ks_xasprintf("%zu %s", v[i].count, v[i].reason);
            /* Sorted as strings, as upstream sorts "count reason". */
            qsort(strs, n, sizeof(char *), cmp_str);
            ks_sb_putc(&b, ' ');
            for (size_t i = 0; i < n; i++) {
                if (i) ks_sb_puts(&b, ", ");
                ks_sb_puts(&b, strs[i]);
                free(strs[i]);
            }
            ks_sb_putc(&b, '.');
            free(strs);
        }
        free(v);
    }
    if (d->post_filter_msg && *d->post_filter_msg) ks_sb_printf(&b, " %s", d->post_filter_msg);
    return ks_sb_take(&b);
}

char *ks_truncate_message(const char *msg) {
    size_t len = strlen(msg);
    if (len <= KS_NOTE_LENGTH_LIMIT) return ks_xstrdup(msg);
    const char *suffix = " ...";
    size_t keep = KS_NOTE_LENGTH_LIMIT - strlen(suffix);
    char *out = ks_xmalloc(KS_NOTE_LENGTH_LIMIT + 1);
    memcpy(out, msg, keep);
    memcpy(out + keep, suffix, strlen(suffix) + 1);
    return out;
}

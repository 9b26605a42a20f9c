#include "plugins/helper/nodememo.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- signatures ---------------------------------------------------------- */

void ks_sig_init(ks_sig *s) { memset(s, 0, sizeof(*s)); }

void ks_sig_free(ks_sig *s) {
    free(s->b);
    memset(s, 0, sizeof(*s));
}

static void sig_bytes(ks_sig *s, const void *p, size_t n) {
    if (!n) return;
    KS_GROW(s->b, s->cap, s->n + n);
    memcpy(s->b + s->n, p, n);
    s->n += n;
}

void ks_sig_u64(ks_sig *s, uint64_t v) { sig_bytes(s, &v, sizeof(v)); }

void ks_sig_selector(ks_sig *s, const ks_label_selector *sel) {
    if (!sel) {
        ks_sig_u64(s, UINT64_MAX);
        return;
    }
    ks_sig_u64(s, sel->nothing);
    ks_sig_u64(s, sel->nreq);
    for (uint32_t i = 0; i < sel->nreq; i++) {
        const ks_requirement *r = &sel->reqs[i];
        ks_sig_u64(s, ((uint64_t)r->key << 32) | (uint32_t)r->op);
        ks_sig_u64(s, (uint64_t)r->num);
        ks_sig_u64(s, r->nvalues);
        sig_bytes(s, r->values, r->nvalues * sizeof(*r->values));
    }
}

void ks_sig_labels(ks_sig *s, const ks_labels *l) {
    ks_sig_u64(s, l->n);
    for (uint32_t i = 0; i < l->n; i++) ks_sig_u64(s, ((uint64_t)l->kv[i].key << 32) | l->kv[i].value);
}

/* ---- the memo ------------------------------------------------------------ */

void ks_nodememo_init(ks_nodememo *m) {
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
}

void ks_nodememo_free(ks_nodememo *m) {
    free(m->slots);
    for (int i = 0; i < KS_NODEMEMO_SIGS; i++) ks_sig_free(&m->sigs[i].sig);
    pthread_mutex_destroy(&m->mu);
}

uint64_t ks_nodememo_begin(ks_nodememo *m, size_t n, const ks_sig *sig) {
    pthread_mutex_lock(&m->mu);
    if (m->busy) {
        pthread_mutex_unlock(&m->mu);
        return 0;
    }
    m->busy = true;
    pthread_mutex_unlock(&m->mu);

    if (n > m->cap) {
        size_t cap = m->cap ? m->cap : 64;
        while (cap < n) cap *= 2;
        m->slots = ks_xrealloc(m->slots, cap * sizeof(*m->slots));
        memset(m->slots + m->cap, 0, (cap - m->cap) * sizeof(*m->slots));
        m->cap = cap;
    }
    for (int i = 0; i < KS_NODEMEMO_SIGS; i++)
        if (m->sigs[i].id && m->sigs[i].sig.n == sig->n && memcmp(m->sigs[i].sig.b, sig->b, sig->n) == 0)
            return m->sigs[i].id;
    /* A new signature takes the oldest place; slots of the one it
     * replaces no longer match any pass. */
    int i = (int)(m->next_sig++ % KS_NODEMEMO_SIGS);
    m->sigs[i].sig.n = 0;
    sig_bytes(&m->sigs[i].sig, sig->b, sig->n);
    m->sigs[i].id = ++m->next_id;
    return m->sigs[i].id;
}

void ks_nodememo_end(ks_nodememo *m, uint64_t pass) {
    if (!pass) return;
    pthread_mutex_lock(&m->mu);
    m->busy = false;
    pthread_mutex_unlock(&m->mu);
}

void ks_nodememo_store(ks_nodememo *m, uint64_t pass, size_t i, const ks_node_info *ni,
                       const ks_nodememo_rec *r) {
    if (!pass) return;
    ks_nodememo_slot *s = &m->slots[i];
    if (r->overflow) {
        s->pass_sig = 0;
        return;
    }
    s->ni = ni;
    s->gen = ni->generation;
    s->pass_sig = pass;
    s->n = r->n;
    memcpy(s->e, r->e, r->n * sizeof(*r->e));
}

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
    ks_sig_requirements(s, sel->reqs, sel->nreq);
}

void ks_sig_requirements(ks_sig *s, const ks_requirement *reqs, uint32_t n) {
    ks_sig_u64(s, n);
    for (uint32_t i = 0; i < n; i++) {
        const ks_requirement *r = &reqs[i];
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
    free(m->entries);
    for (int i = 0; i < KS_NODEMEMO_SIGS; i++) ks_sig_free(&m->sigs[i].sig);
    for (int t = 0; t < KS_NODEMEMO_TABS; t++) {
        ks_pairtab_free(&m->agg.val[t]);
        ks_pairtab_free(&m->agg.cnt[t]);
    }
    pthread_mutex_destroy(&m->mu);
}

static uint64_t sig_id(ks_nodememo *m, const ks_sig *sig) {
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

static ks_nodememo_entry *entries_of(const ks_nodememo *m, size_t i) { return m->entries + i * KS_NODEMEMO_MAX; }

/* Slot i's entries into (sign +1) or out of (-1) the sums, serially. */
static void sum_slot_serial(ks_nodememo *m, size_t i, int sign) {
    const ks_nodememo_entry *e = entries_of(m, i);
    for (uint32_t k = 0; k < m->slots[i].n; k++) {
        ks_pairtab_add(&m->agg.val[e[k].tab], e[k].key, sign * e[k].val);
        ks_pairtab_add(&m->agg.cnt[e[k].tab], e[k].key, sign);
    }
}

uint64_t ks_nodememo_begin(ks_nodememo *m, size_t n, const ks_sig *sig, uint32_t ntabs) {
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
        m->entries = ks_xrealloc(m->entries, cap * KS_NODEMEMO_MAX * sizeof(*m->entries));
        m->cap = cap;
    }
    uint64_t pass = sig_id(m, sig);
    if (m->agg.pass != pass || m->agg.ntabs != ntabs) {
        /* sum from scratch: every node's pairs go in */
        for (uint32_t t = 0; t < KS_NODEMEMO_TABS; t++) {
            ks_pairtab_free(&m->agg.val[t]);
            ks_pairtab_free(&m->agg.cnt[t]);
        }
        m->agg.n = 0;
    } else {
        /* the list shrank: the positions past its end leave the sums */
        for (size_t i = n; i < m->agg.n; i++)
            if (m->slots[i].pass_sig == pass) sum_slot_serial(m, i, -1);
        if (n < m->agg.n) m->agg.n = n;
    }
    m->agg.pass = pass;
    m->agg.ntabs = ntabs;
    m->agg.summed = m->agg.n;
    m->agg.n = n;
    atomic_store(&m->agg.overflow, false);
    for (uint32_t t = 0; t < ntabs; t++) {
        ks_pairtab_par_begin(&m->agg.pval[t], &m->agg.val[t], false);
        ks_pairtab_par_begin(&m->agg.pcnt[t], &m->agg.cnt[t], false);
    }
    return pass;
}

bool ks_nodememo_done(ks_nodememo *m, uint64_t pass) {
    if (!pass) return false;
    for (uint32_t t = 0; t < m->agg.ntabs; t++) {
        ks_pairtab_par_end(&m->agg.pval[t]);
        ks_pairtab_par_end(&m->agg.pcnt[t]);
    }
    if (atomic_load(&m->agg.overflow)) {
        m->agg.pass = 0; /* the sums lack that node: start over next time */
        return false;
    }
    return true;
}

/* Drop the keys no slot counts any more from both tables. */
static void compact(ks_nodememo *m, uint32_t tab) {
    ks_pairtab *val = &m->agg.val[tab], *cnt = &m->agg.cnt[tab];
    ks_pairtab nval, ncnt;
    ks_pairtab_init(&nval, cnt->nkeys);
    ks_pairtab_init(&ncnt, cnt->nkeys);
    for (uint32_t i = 0; i < cnt->cap; i++) {
        if (!cnt->keys[i] || !cnt->vals[i]) continue;
        ks_pairtab_add(&ncnt, cnt->keys[i], cnt->vals[i]);
        ks_pairtab_add(&nval, cnt->keys[i], ks_pairtab_get(val, cnt->keys[i]));
    }
    ks_pairtab_free(val);
    ks_pairtab_free(cnt);
    *val = nval;
    *cnt = ncnt;
}

void ks_nodememo_result(ks_nodememo *m, uint32_t tab, ks_pairtab *out) {
    const ks_pairtab *cnt = &m->agg.cnt[tab];
    bool dead = false;
    for (uint32_t i = 0; i < cnt->cap && !dead; i++) dead = cnt->keys[i] && !cnt->vals[i];
    if (dead) compact(m, tab);
    ks_pairtab_copy(out, &m->agg.val[tab]);
    ks_pairtab_recount(out);
}

bool ks_nodememo_sum_of(const ks_nodememo *m, uint32_t tab, uint64_t key, int64_t *val) {
    int64_t c = 0;
    if (!ks_pairtab_find(&m->agg.cnt[tab], key, &c) || c == 0) return false;
    ks_pairtab_find(&m->agg.val[tab], key, val);
    return true;
}

void ks_nodememo_end(ks_nodememo *m, uint64_t pass) {
    if (!pass) return;
    pthread_mutex_lock(&m->mu);
    m->busy = false;
    pthread_mutex_unlock(&m->mu);
}

/* ---- a chunk's part ------------------------------------------------------ */

void ks_nodememo_sum_init(ks_nodememo_sum *s, ks_nodememo *m) {
    s->m = m;
    s->ready = false;
}

static void sum_slot(ks_nodememo_sum *s, const ks_nodememo_entry *e, uint32_t n, int sign) {
    if (!n) return;
    if (!s->ready) {
        for (uint32_t t = 0; t < s->m->agg.ntabs; t++) {
            ks_pairbuf_init(&s->val[t], &s->m->agg.pval[t]);
            ks_pairbuf_init(&s->cnt[t], &s->m->agg.pcnt[t]);
        }
        s->ready = true;
    }
    for (uint32_t i = 0; i < n; i++) {
        ks_pairbuf_add(&s->val[e[i].tab], e[i].key, sign * e[i].val);
        ks_pairbuf_add(&s->cnt[e[i].tab], e[i].key, sign);
    }
}

void ks_nodememo_sum_hit(ks_nodememo_sum *s, size_t i, const ks_nodememo_slot *hit) {
    if (i >= s->m->agg.summed) sum_slot(s, entries_of(s->m, i), (uint32_t)hit->n, +1);
}

void ks_nodememo_sum_store(ks_nodememo_sum *s, uint64_t pass, size_t i, const ks_node_info *ni,
                           const ks_nodememo_rec *r) {
    ks_nodememo *m = s->m;
    ks_nodememo_slot *slot = &m->slots[i];
    if (i < m->agg.summed && slot->pass_sig == pass) sum_slot(s, entries_of(m, i), (uint32_t)slot->n, -1);
    if (r->overflow) {
        slot->pass_sig = 0;
        atomic_store(&m->agg.overflow, true);
        return;
    }
    sum_slot(s, r->e, r->n, +1);
    slot->ni = ni;
    slot->gen = ni->generation;
    slot->pass_sig = pass;
    slot->n = r->n;
    memcpy(entries_of(m, i), r->e, r->n * sizeof(*r->e));
}

void ks_nodememo_sum_flush(ks_nodememo_sum *s) {
    for (uint32_t t = 0; s->ready && t < s->m->agg.ntabs; t++) {
        ks_pairbuf_flush(&s->val[t]);
        ks_pairbuf_flush(&s->cnt[t]);
    }
}

void ks_nodememo_scan(ks_nodememo *m, uint64_t pass, const ks_node_info *const *nodes, const uint64_t *gens,
                      size_t lo, size_t hi, void (*count)(const ks_node_info *ni, ks_nodememo_rec *rec, void *arg),
                      void *arg) {
    ks_nodememo_sum sum;
    ks_nodememo_sum_init(&sum, m);
    for (size_t i = lo; i < hi; i++) {
        const ks_node_info *ni = nodes[i];
        const ks_nodememo_slot *hit = ks_nodememo_hit(m, pass, i, ni, gens);
        if (hit) {
            ks_nodememo_sum_hit(&sum, i, hit);
            continue;
        }
        ks_nodememo_rec rec;
        ks_nodememo_rec_init(&rec);
        count(ni, &rec, arg);
        ks_nodememo_sum_store(&sum, pass, i, ni, &rec);
    }
    ks_nodememo_sum_flush(&sum);
}

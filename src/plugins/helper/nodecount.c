#include "plugins/helper/nodecount.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void ks_nodecount_init(ks_nodecount *c) {
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
}

void ks_nodecount_free(ks_nodecount *c) {
    free(c->slots);
    for (int i = 0; i < KS_NODECOUNT_SIGS; i++) ks_sig_free(&c->sigs[i].sig);
    pthread_mutex_destroy(&c->mu);
}

static uint32_t sig_id(ks_nodecount *c, const ks_sig *sig) {
    for (int i = 0; i < KS_NODECOUNT_SIGS; i++)
        if (c->sigs[i].id && c->sigs[i].sig.n == sig->n && memcmp(c->sigs[i].sig.b, sig->b, sig->n) == 0)
            return c->sigs[i].id;
    /* A new signature takes the oldest place; the slots of the one it
     * replaces no longer match any pass. */
    int i = (int)(c->next_sig++ % KS_NODECOUNT_SIGS);
    ks_sig_free(&c->sigs[i].sig);
    c->sigs[i].sig.b = ks_xmalloc(sig->n ? sig->n : 1);
    if (sig->n) memcpy(c->sigs[i].sig.b, sig->b, sig->n);
    c->sigs[i].sig.n = c->sigs[i].sig.cap = sig->n;
    if (++c->next_id == 0) {
        /* ids wrapped: forget every slot rather than mistake an old one */
        memset(c->slots, 0, c->n * sizeof(*c->slots));
        for (int j = 0; j < KS_NODECOUNT_SIGS; j++)
            if (j != i) c->sigs[j].id = 0;
        c->next_id = 1;
    }
    c->sigs[i].id = c->next_id;
    return c->next_id;
}

uint32_t ks_nodecount_begin(ks_nodecount *c, const ks_sig *sig, const ks_node_info *const *nodes, size_t n) {
    pthread_mutex_lock(&c->mu);
    bool busy = c->busy;
    c->busy = true;
    pthread_mutex_unlock(&c->mu);
    if (busy) return 0;
    ks_id top = 0;
    for (size_t i = 0; i < n; i++)
        if (nodes[i]->name > top) top = nodes[i]->name;
    if (n && (size_t)top >= c->n) {
        size_t cap = c->n ? c->n : 64;
        while (cap <= (size_t)top) cap *= 2;
        c->slots = ks_xrealloc(c->slots, cap * sizeof(*c->slots));
        memset(c->slots + c->n, 0, (cap - c->n) * sizeof(*c->slots));
        c->n = cap;
    }
    return sig_id(c, sig);
}

void ks_nodecount_end(ks_nodecount *c, uint32_t pass) {
    if (!pass) return;
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    pthread_mutex_unlock(&c->mu);
}

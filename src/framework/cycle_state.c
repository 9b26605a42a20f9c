#include "framework/cycle_state.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* State keys are global: a name maps to the same slot in every cycle. */
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static char *key_names[KS_MAX_STATE_KEYS];
static int nkeys;

ks_state_key ks_state_key_get(const char *name) {
    pthread_mutex_lock(&key_lock);
    for (int i = 0; i < nkeys; i++) {
        if (strcmp(key_names[i], name) == 0) {
            pthread_mutex_unlock(&key_lock);
            return i;
        }
    }
    if (nkeys == KS_MAX_STATE_KEYS) {
        pthread_mutex_unlock(&key_lock);
        return -1;
    }
    key_names[nkeys] = ks_xstrdup(name);
    int k = nkeys++;
    pthread_mutex_unlock(&key_lock);
    return k;
}

ks_cycle_state *ks_cycle_state_new(void) {
    ks_cycle_state *st = ks_xcalloc(1, sizeof(*st));
    st->arena = ks_arena_new(2048);
    return st;
}

void ks_cycle_state_drop_scratch(ks_cycle_state *st) {
    if (!st) return;
    ks_arena_free(st->scratch);
    st->scratch = NULL;
}

static void free_values(ks_cycle_state *st) {
    for (int i = 0; i < KS_MAX_STATE_KEYS; i++) {
        ks_state_slot *s = &st->slots[i];
        if (s->value && s->free_fn) s->free_fn(s->value);
        memset(s, 0, sizeof(*s));
    }
}

void ks_cycle_state_free(ks_cycle_state *st) {
    if (!st) return;
    free_values(st);
    ks_arena_free(st->arena);
    ks_arena_free(st->scratch);
    free(st);
}

ks_cycle_state *ks_cycle_state_clone(const ks_cycle_state *st) {
    ks_cycle_state *c = ks_cycle_state_new();
    for (int i = 0; i < KS_MAX_STATE_KEYS; i++) {
        const ks_state_slot *s = &st->slots[i];
        if (!s->value) continue;
        if (s->clone_fn) {
            c->slots[i].value = s->clone_fn(s->value);
            c->slots[i].free_fn = s->free_fn;
            c->slots[i].clone_fn = s->clone_fn;
        } else {
            /* Shared, read-only data (or arena data of the original cycle,
             * which outlives the dry run): never freed by the clone. */
            c->slots[i].value = s->value;
        }
    }
    c->record_plugin_metrics = st->record_plugin_metrics;
    memcpy(c->skip_filter, st->skip_filter, sizeof(c->skip_filter));
    memcpy(c->skip_score, st->skip_score, sizeof(c->skip_score));
    memcpy(c->skip_pre_bind, st->skip_pre_bind, sizeof(c->skip_pre_bind));
    c->filters_for = st->filters_for;
    c->filters = st->filters;
    c->nfilters = st->nfilters;
    c->plain_filters = st->plain_filters;
    return c;
}

void ks_cycle_state_write(ks_cycle_state *st, ks_state_key key, void *value,
                          void (*free_fn)(void *), void *(*clone_fn)(const void *)) {
    if (key < 0 || key >= KS_MAX_STATE_KEYS) return;
    ks_state_slot *s = &st->slots[key];
    if (s->value && s->free_fn && s->value != value) s->free_fn(s->value);
    s->value = value;
    s->free_fn = free_fn;
    s->clone_fn = clone_fn;
}

void *ks_cycle_state_read(const ks_cycle_state *st, ks_state_key key) {
    if (key < 0 || key >= KS_MAX_STATE_KEYS) return NULL;
    return st->slots[key].value;
}

void *ks_cycle_state_alloc(ks_cycle_state *st, size_t n) { return ks_arena_alloc(st->arena, n); }

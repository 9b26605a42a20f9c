#include "framework/cycle_state.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* State keys are global: a name maps to the same slot in every cycle. */
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static char *key_names[KS_MAX_STATE_KEYS];
static _Atomic int nkeys;
static _Atomic bool scheduling_only[KS_MAX_STATE_KEYS];

void ks_state_key_scheduling_only(ks_state_key key) {
    if (key >= 0 && key < KS_MAX_STATE_KEYS) scheduling_only[key] = true;
}

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
    int k = nkeys;
    key_names[k] = ks_xstrdup(name);
    nkeys = k + 1;
    pthread_mutex_unlock(&key_lock);
    return k;
}

/* What a cycle leaves in its arena (the plugins' PreFilter and PreScore
 * states, the framework's plugin lists), followed as scheduling cycles
 * end: the arena lives as long as the binding cycle. */
static ks_arena_hint arena_hint;

/* The slots live in the state's own block while they fit. */
static ks_state_slot *inline_slots(ks_cycle_state *st) { return (ks_state_slot *)(st + 1); }

ks_cycle_state *ks_cycle_state_new(void) {
    uint32_t n = (uint32_t)nkeys;
    ks_cycle_state *st = ks_xcalloc(1, sizeof(*st) + n * sizeof(ks_state_slot));
    st->slots = inline_slots(st);
    st->nslots = n;
    st->arena = ks_arena_new(ks_arena_hint_get(&arena_hint, 1024));
    return st;
}

/* Room for key (written in PreFilter or PreScore, never while another
 * thread reads the state: ksched.h). */
static void grow(ks_cycle_state *st, ks_state_key key) {
    uint32_t n = (uint32_t)nkeys;
    if (n <= (uint32_t)key) n = (uint32_t)key + 1;
    ks_state_slot *v = ks_xcalloc(n, sizeof(*v));
    memcpy(v, st->slots, st->nslots * sizeof(*v));
    if (st->slots != inline_slots(st)) free(st->slots);
    st->slots = v;
    st->nslots = n;
}

void ks_cycle_state_drop_scratch(ks_cycle_state *st) {
    if (!st) return;
    /* a whole scheduling cycle's use (not a dry run's clone) */
    ks_arena_hint_note(&arena_hint, st->arena);
    ks_arena_free(st->scratch);
    st->scratch = NULL;
    for (uint32_t i = 0; i < st->nslots; i++) {
        ks_state_slot *s = &st->slots[i];
        if (!s->value || !scheduling_only[i]) continue;
        if (s->free_fn) s->free_fn(s->value);
        memset(s, 0, sizeof(*s));
    }
}

static void free_values(ks_cycle_state *st) {
    for (uint32_t i = 0; i < st->nslots; i++) {
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
    if (st->slots != inline_slots(st)) free(st->slots);
    free(st);
}

ks_cycle_state *ks_cycle_state_clone(const ks_cycle_state *st) {
    ks_cycle_state *c = ks_cycle_state_new();
    if (c->nslots < st->nslots) grow(c, (ks_state_key)st->nslots - 1);
    for (uint32_t i = 0; i < st->nslots; i++) {
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
    if ((uint32_t)key >= st->nslots) grow(st, key);
    ks_state_slot *s = &st->slots[key];
    if (s->value && s->free_fn && s->value != value) s->free_fn(s->value);
    s->value = value;
    s->free_fn = free_fn;
    s->clone_fn = clone_fn;
}

void *ks_cycle_state_read(const ks_cycle_state *st, ks_state_key key) {
    if (key < 0 || (uint32_t)key >= st->nslots) return NULL;
    return st->slots[key].value;
}

void *ks_cycle_state_alloc(ks_cycle_state *st, size_t n) { return ks_arena_alloc(st->arena, n); }

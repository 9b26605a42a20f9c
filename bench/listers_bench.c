/* ksched_listers: what one object's update costs the listers (a benchmark,
 * not a test). The listers hold S ResourceSlices and C ResourceClaims, as
 * a DRA cluster of S nodes does; then, R times, one claim is replaced (a
 * claim status write coming back as a watch event) and a view is pinned
 * and unpinned, as the scheduler does around every watch event and cycle.
 *
 *   ksched_listers [--slices S] [--claims C] [--rounds R]
 *
 * Prints the time per update (apply + pin + unpin): median, p90, p99 and mean
 * in microseconds. Defaults: 5000 slices, 10000 claims, 2000 rounds. */
#include "api/dra.h"
#include "backend/listers.h"
#include "util/arena.h"
#include "util/intern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static ks_resource_claim *claim(uint32_t i) {
    char name[32];
    snprintf(name, sizeof(name), "claim-%u", i);
    ks_arena *a = ks_arena_new(256);
    ks_resource_claim *c = ks_arena_calloc(a, 1, sizeof(*c));
    c->arena = a;
    c->ns = ks_intern("default");
    c->name = ks_intern(name);
    return c;
}

static ks_resource_slice *slice(uint32_t i) {
    char name[32];
    snprintf(name, sizeof(name), "node-%u-slice", i);
    ks_arena *a = ks_arena_new(256);
    ks_resource_slice *s = ks_arena_calloc(a, 1, sizeof(*s));
    s->arena = a;
    s->name = ks_intern(name);
    return s;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    uint32_t nslices = 5000, nclaims = 10000, rounds = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        uint32_t v = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--slices")) nslices = v;
        else if (!strcmp(argv[i], "--claims")) nclaims = v ? v : 1;
        else if (!strcmp(argv[i], "--rounds")) rounds = v ? v : 1;
        else {
            fprintf(stderr, "usage: %s [--slices S] [--claims C] [--rounds R]\n", argv[0]);
            return 2;
        }
    }
    ks_listers *l = ks_listers_new();
    for (uint32_t i = 0; i < nslices; i++) {
        ks_resource_slice *s = slice(i);
        ks_listers_apply(l, KS_KIND_RESOURCE_SLICE, KS_WATCH_ADDED, NULL, s);
        KS_OBJECT_UNREF(s);
    }
    for (uint32_t i = 0; i < nclaims; i++) {
        ks_resource_claim *c = claim(i);
        ks_listers_apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_ADDED, NULL, c);
        KS_OBJECT_UNREF(c);
    }
    uint64_t t;
    ks_listers_unpin(l, (ks_listers_pin(l, &t), t));

    int64_t *ns = malloc(rounds * sizeof(*ns)), sum = 0;
    for (uint32_t r = 0; r < rounds; r++) {
        ks_resource_claim *c = claim((r * 7919u) % nclaims);
        int64_t t0 = now_ns();
        ks_listers_apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_MODIFIED, NULL, c);
        const ks_objects *v = ks_listers_pin(l, &t);
        ks_listers_unpin(l, t);
        ns[r] = now_ns() - t0;
        sum += ns[r];
        KS_OBJECT_UNREF(c);
        if (v->resource_claims.n != nclaims) abort();
    }
    qsort(ns, rounds, sizeof(*ns), cmp_i64);
    printf("listers: %u slices, %u claims, %u updates: per update (apply + pin + unpin) "
           "median %.2f us, p90 %.2f us, p99 %.2f us, mean %.2f us\n",
           nslices, nclaims, rounds, ns[rounds / 2] / 1e3, ns[rounds * 9 / 10] / 1e3, ns[rounds * 99 / 100] / 1e3,
           (double)sum / rounds / 1e3);
    free(ns);
    ks_listers_free(l);
    return 0;
}

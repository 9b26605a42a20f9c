/* The CPU profiler (util/cpuprof.h) and /debug/pprof/ (server/pprof.h):
 * two threads burn CPU in a function of this file while a profile is
 * taken; the answer must be gzip, a perftools.profiles.Profile whose
 * samples are cpu/nanoseconds at 10 ms, most of them in that function
 * (a static one: only .symtab names it), labelled with the threads'
 * names; a second profile at the same time is refused as Go refuses it. */
#include "server/pprof.h"
#include "util/cpuprof.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

static atomic_bool stop;
static _Atomic double sink;

static __attribute__((noinline)) double burn_cpu_in_test(double x) {
    for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 0.5;
    return x;
}

static void *burner(void *arg) {
    pthread_setname_np(pthread_self(), (const char *)arg);
    double x = 1;
    while (!atomic_load(&stop)) x = burn_cpu_in_test(x);
    sink = x;
    return NULL;
}

static char *gunzip(const char *in, size_t n, size_t *out_len) {
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    size_t cap = 1 << 20, len = 0;
    char *o = malloc(cap);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    int rc;
    do {
        if (len == cap) o = realloc(o, cap *= 2);
        z.next_out = (Bytef *)o + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = z.total_out;
    } while (rc == Z_OK);
    assert_int_equal(rc, Z_STREAM_END);
    inflateEnd(&z);
    *out_len = len;
    return o;
}

typedef struct rd {
    const uint8_t *p, *end;
} rd;

static uint64_t varint(rd *r) {
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        assert_true(r->p < r->end);
        uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) return x;
    }
    fail_msg("varint too long");
    return 0;
}

/* next field: number, and either *v (varint) or *sub (bytes) */
static bool field(rd *r, uint32_t *num, uint64_t *v, rd *sub) {
    if (r->p >= r->end) return false;
    uint64_t key = varint(r);
    *num = (uint32_t)(key >> 3);
    if ((key & 7) == 0) {
        *v = varint(r);
        sub->p = sub->end = NULL;
    } else {
        assert_int_equal(key & 7, 2);
        uint64_t n = varint(r);
        assert_true(n <= (uint64_t)(r->end - r->p));
        sub->p = r->p;
        sub->end = r->p + n;
        r->p += n;
    }
    return true;
}

typedef struct prof {
    char *strs[4096];
    size_t nstrs;
    uint64_t fn_name[4096];      /* function id -> name string index */
    uint64_t loc_fn[65536];      /* location id -> function id */
    size_t samples, in_burn, labelled_burner;
    uint64_t period, value_ns;
    uint64_t type_idx[4];
    size_t ntypes;
} prof;

static void parse(prof *P, const char *buf, size_t n) {
    /* two passes: strings, functions and locations first */
    for (int pass = 0; pass < 2; pass++) {
        rd r = {(const uint8_t *)buf, (const uint8_t *)buf + n}, sub;
        uint32_t num;
        uint64_t v;
        while (field(&r, &num, &v, &sub)) {
            if (pass == 0 && num == 6) {
                assert_true(P->nstrs < 4096);
                P->strs[P->nstrs++] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
            } else if (pass == 0 && num == 5) {
                uint64_t id = 0, name = 0;
                uint32_t f;
                rd s2;
                while (field(&sub, &f, &v, &s2)) {
                    if (f == 1) id = v;
                    if (f == 2) name = v;
                }
                assert_true(id > 0 && id < 4096);
                P->fn_name[id] = name;
            } else if (pass == 0 && num == 4) {
                uint64_t id = 0, fn = 0;
                uint32_t f;
                rd s2;
                while (field(&sub, &f, &v, &s2)) {
                    if (f == 1) id = v;
                    if (f == 4) {
                        uint32_t g;
                        rd s3;
                        while (field(&s2, &g, &v, &s3))
                            if (g == 1) fn = v;
                    }
                }
                assert_true(id > 0 && id < 65536);
                P->loc_fn[id] = fn;
            } else if (pass == 0 && num == 12) {
                P->period = v;
            } else if (pass == 0 && num == 1) {
                uint32_t f;
                rd s2;
                while (field(&sub, &f, &v, &s2))
                    if (f == 1 && P->ntypes < 4) P->type_idx[P->ntypes++] = v;
            } else if (pass == 1 && num == 2) {
                P->samples++;
                uint32_t f;
                rd s2;
                bool burn = false, label = false;
                while (field(&sub, &f, &v, &s2)) {
                    if (f == 1) {
                        /* packed location ids: the leaf first */
                        bool leaf = true;
                        while (s2.p < s2.end) {
                            uint64_t loc = varint(&s2);
                            const char *nm = P->strs[P->fn_name[P->loc_fn[loc]]];
                            if (leaf && strcmp(nm, "burn_cpu_in_test") == 0) burn = true;
                            leaf = false;
                        }
                    } else if (f == 2) {
                        varint(&s2);
                        P->value_ns += varint(&s2);
                    } else if (f == 3) {
                        uint32_t g;
                        rd s3;
                        uint64_t key = 0, str = 0;
                        while (field(&s2, &g, &v, &s3)) {
                            if (g == 1) key = v;
                            if (g == 2) str = v;
                        }
                        if (strcmp(P->strs[key], "thread") == 0 && strncmp(P->strs[str], "burner-", 7) == 0)
                            label = true;
                    }
                }
                if (burn) P->in_burn++;
                if (burn && label) P->labelled_burner++;
            }
        }
    }
}

static void *second_profile(void *arg) {
    char **err = arg;
    char *out = NULL;
    size_t len;
    if (ks_cpuprof_collect(1, &out, &len, err)) free(out);
    return NULL;
}

static void test_profile_of_two_threads(void **state) {
    (void)state;
    atomic_store(&stop, false);
    pthread_t t[2];
    pthread_create(&t[0], NULL, burner, "burner-0");
    pthread_create(&t[1], NULL, burner, "burner-1");
    /* while one runs, another is refused */
    char *err2 = NULL;
    pthread_t other;
    ks_strbuf body;
    ks_sb_init(&body);
    const char *ct = NULL;
    int status;
    /* a 1 s profile on another thread, ours 200 ms later: one of them is refused */
    pthread_create(&other, NULL, second_profile, &err2);
    struct timespec d = {0, 200 * 1000 * 1000};
    nanosleep(&d, NULL);
    status = ks_pprof_route(NULL, "GET", "/debug/pprof/profile", "seconds=2", &body, &ct);
    pthread_join(other, NULL);
    atomic_store(&stop, true);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    /* The first one to start was the 1 s profile on the other thread, or
     * ours: exactly one of the two overlapping ones is refused unless the
     * other finished first. */
    if (status != 200) {
        assert_int_equal(status, 500);
        assert_non_null(strstr(ks_sb_str(&body), "cpu profiling already in use"));
        ks_sb_free(&body);
        free(err2);
        /* then once more, alone */
        atomic_store(&stop, false);
        pthread_create(&t[0], NULL, burner, "burner-0");
        pthread_create(&t[1], NULL, burner, "burner-1");
        ks_sb_init(&body);
        status = ks_pprof_route(NULL, "GET", "/debug/pprof/profile", "seconds=2", &body, &ct);
        atomic_store(&stop, true);
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
    } else {
        assert_non_null(err2);
        assert_string_equal(err2, "cpu profiling already in use");
        free(err2);
    }
    assert_int_equal(status, 200);
    assert_string_equal(ct, "application/octet-stream");
    assert_true(body.len > 20);
    assert_int_equal((uint8_t)body.s[0], 0x1f); /* gzip */
    assert_int_equal((uint8_t)body.s[1], 0x8b);
    size_t n;
    char *raw = gunzip(body.s, body.len, &n);
    prof *P = calloc(1, sizeof(*P));
    parse(P, raw, n);
    assert_int_equal(P->ntypes, 2);
    assert_string_equal(P->strs[P->type_idx[0]], "samples");
    assert_string_equal(P->strs[P->type_idx[1]], "cpu");
    assert_int_equal(P->period, 10000000);
    /* two threads for 2 s: up to 400 samples; a loaded machine gives fewer */
    assert_true(P->samples >= 10);
    assert_true(P->value_ns == P->samples * 10000000ull);
    assert_true(P->in_burn * 2 >= P->samples);
    assert_int_equal(P->labelled_burner, P->in_burn);
    for (size_t i = 0; i < P->nstrs; i++) free(P->strs[i]);
    free(P);
    free(raw);
    ks_sb_free(&body);
}

static void test_index_cmdline_unknown(void **state) {
    (void)state;
    ks_strbuf b;
    ks_sb_init(&b);
    const char *ct = NULL;
    assert_int_equal(ks_pprof_route(NULL, "GET", "/debug/pprof/", "", &b, &ct), 200);
    assert_non_null(strstr(ks_sb_str(&b), "<a href='profile'>profile</a>"));
    assert_string_equal(ct, "text/html; charset=utf-8");
    ks_sb_reset(&b);
    assert_int_equal(ks_pprof_route(NULL, "GET", "/debug/pprof/cmdline", "", &b, &ct), 200);
    assert_non_null(strstr(ks_sb_str(&b), "test_cpuprof"));
    ks_sb_reset(&b);
    assert_int_equal(ks_pprof_route(NULL, "GET", "/debug/pprof/heap", "", &b, &ct), 404);
    assert_string_equal(ks_sb_str(&b), "Unknown profile\n");
    ks_sb_free(&b);
    char *out = NULL, *err = NULL;
    size_t len;
    assert_false(ks_cpuprof_collect(0, &out, &len, &err));
    assert_non_null(err);
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_of_two_threads),
        cmocka_unit_test(test_index_cmdline_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

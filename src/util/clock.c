#include "util/clock.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

/* The two clocks. */
typedef struct clock_ops {
    int64_t (*now)(const ks_clock *c);
    void (*set)(ks_clock *c, int64_t t);
    void (*wait_until)(ks_clock *c, int64_t t);
    bool (*cond_wait)(const ks_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ns);
} clock_ops;

struct ks_clock {
    const clock_ops *ops;
    int64_t sim_now; /* the simulated clock's time */
};

/* ---- the real clock ------------------------------------------------------ */

static int64_t real_now(const ks_clock *c) { return ks_wall_ns(); }

static void real_set(ks_clock *c, int64_t t) {}

static void real_wait_until(ks_clock *c, int64_t t) {
    struct timespec ts = {.tv_sec = t / KS_NS_PER_SEC, .tv_nsec = t % KS_NS_PER_SEC};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static bool real_cond_wait(const ks_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ns) {
    if (deadline_ns == INT64_MAX) {
        pthread_cond_wait(cv, mu);
        return true;
    }
    /* Condition variables wait on CLOCK_REALTIME by default, the same
     * base as ks_clock_now for the real clock. */
    struct timespec ts = {.tv_sec = deadline_ns / KS_NS_PER_SEC,
                          .tv_nsec = deadline_ns % KS_NS_PER_SEC};
    return pthread_cond_timedwait(cv, mu, &ts) != ETIMEDOUT;
}

static const clock_ops real_ops = {real_now, real_set, real_wait_until, real_cond_wait};
static ks_clock real_clock = {.ops = &real_ops};

/* ---- the simulated clock --------------------------------------------------- */

static int64_t sim_now(const ks_clock *c) { return c->sim_now; }

static void sim_set(ks_clock *c, int64_t t) {
    if (t > c->sim_now) c->sim_now = t;
}

static bool sim_cond_wait(const ks_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ns) {
    return false;
}

/* Waiting until t is jumping there. */
static const clock_ops sim_ops = {sim_now, sim_set, sim_set, sim_cond_wait};

/* ---- the interface --------------------------------------------------------- */

ks_clock *ks_clock_real(void) { return &real_clock; }

ks_clock *ks_clock_sim_new(int64_t start_ns) {
    ks_clock *c = ks_xcalloc(1, sizeof(*c));
    c->ops = &sim_ops;
    c->sim_now = start_ns;
    return c;
}

void ks_clock_free(ks_clock *c) {
    if (c && c != &real_clock) free(c);
}

int64_t ks_clock_now(const ks_clock *c) {
    if (!c) c = &real_clock;
    return c->ops->now(c);
}

void ks_clock_sim_set(ks_clock *c, int64_t t) { c->ops->set(c, t); }

void ks_clock_wait_until(ks_clock *c, int64_t t) {
    if (!c) c = &real_clock;
    c->ops->wait_until(c, t);
}

bool ks_clock_cond_wait(const ks_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
                        int64_t deadline_ns) {
    if (!c) c = &real_clock;
    return c->ops->cond_wait(c, cv, mu, deadline_ns);
}

int64_t ks_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KS_NS_PER_SEC + ts.tv_nsec;
}

int64_t ks_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * KS_NS_PER_SEC + ts.tv_nsec;
}

/* Print v / 10^prec with the fraction's trailing zeros dropped. */
static int put_frac(char *buf, int n, uint64_t v, int prec) {
    uint64_t div = 1;
    for (int i = 0; i < prec; i++) div *= 10;
    uint64_t ip = v / div, fp = v % div;
    if (fp == 0) return snprintf(buf, (size_t)n, "%llu", (unsigned long long)ip);
    /* prec digits, zero padded, trailing zeros dropped */
    char f[24];
    int len = prec < 20 ? prec : 20;
    f[len] = 0;
    for (int i = len - 1; i >= 0; i--) {
        f[i] = (char)('0' + fp % 10);
        fp /= 10;
    }
    while (len > 0 && f[len - 1] == '0') f[--len] = 0;
    return snprintf(buf, (size_t)n, "%llu.%s", (unsigned long long)ip, f);
}

void ks_format_duration(int64_t ns, char *buf, int n) {
    if (n <= 0) return;
    if (ns == 0) {
        snprintf(buf, (size_t)n, "0s");
        return;
    }
    int off = 0;
    uint64_t u = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
    if (ns < 0 && off < n - 1) buf[off++] = '-';
    buf[off] = 0;
    char *p = buf + off;
    int left = n - off;
    if (u < 1000) {
        snprintf(p, (size_t)left, "%lluns", (unsigned long long)u);
    } else if (u < 1000000) {
        int w = put_frac(p, left, u, 3);
        if (w < left) snprintf(p + w, (size_t)(left - w), "\xc2\xb5s");
    } else if (u < (uint64_t)KS_NS_PER_SEC) {
        int w = put_frac(p, left, u, 6);
        if (w < left) snprintf(p + w, (size_t)(left - w), "ms");
    } else {
        uint64_t h = u / (3600ULL * KS_NS_PER_SEC);
        u -= h * 3600ULL * KS_NS_PER_SEC;
        uint64_t m = u / (60ULL * KS_NS_PER_SEC);
        u -= m * 60ULL * KS_NS_PER_SEC;
        int w = 0;
        if (h) w += snprintf(p + w, (size_t)(left - w), "%lluh", (unsigned long long)h);
        if ((h || m) && w < left) w += snprintf(p + w, (size_t)(left - w), "%llum", (unsigned long long)m);
        if (w < left) w += put_frac(p + w, left - w, u, 9);
        if (w < left) snprintf(p + w, (size_t)(left - w), "s");
    }
}

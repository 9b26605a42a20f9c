#include "kube/ratelimit.h"

#include <math.h>

void ks_ratelimit_init(ks_ratelimit *r, double qps, int burst, int64_t now_ns) {
    pthread_mutex_init(&r->mu, NULL);
    r->qps = qps;
    r->burst = burst > 0 ? burst : 10;
    r->tokens = r->burst;
    r->last_ns = now_ns;
}

void ks_ratelimit_destroy(ks_ratelimit *r) { pthread_mutex_destroy(&r->mu); }

/* Add what accrued since the last call, never above burst. A clock that
 * went backwards adds nothing (x/time/rate does the same). */
static void refill(ks_ratelimit *r, int64_t now_ns) {
    if (now_ns <= r->last_ns) return;
    double add = (double)(now_ns - r->last_ns) / 1e9 * r->qps;
    r->tokens = fmin(r->burst, r->tokens + add);
    r->last_ns = now_ns;
}

int64_t ks_ratelimit_reserve(ks_ratelimit *r, int64_t now_ns) {
    if (r->qps <= 0) return 0;
    pthread_mutex_lock(&r->mu);
    refill(r, now_ns);
    r->tokens -= 1;
    int64_t wait = 0;
    if (r->tokens < 0) wait = (int64_t)ceil(-r->tokens / r->qps * 1e9);
    pthread_mutex_unlock(&r->mu);
    return wait;
}

bool ks_ratelimit_try(ks_ratelimit *r, int64_t now_ns) {
    if (r->qps <= 0) return true;
    pthread_mutex_lock(&r->mu);
    refill(r, now_ns);
    bool ok = r->tokens >= 1;
    if (ok) r->tokens -= 1;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

double ks_ratelimit_tokens(ks_ratelimit *r, int64_t now_ns) {
    if (r->qps <= 0) return INFINITY;
    pthread_mutex_lock(&r->mu);
    refill(r, now_ns);
    double t = r->tokens;
    pthread_mutex_unlock(&r->mu);
    return t;
}

/* client-go's client-side rate limiter (util/flowcontrol's token bucket,
 * which is golang.org/x/time/rate underneath): the bucket holds up to
 * `burst` tokens, starts full and refills at `qps` tokens per second. A
 * request takes one token; when none is left it still takes one (the
 * count goes negative) and waits until the refill covers it, so waiters
 * are served in the order they asked. Times are passed in, so that tests
 * count tokens on a clock of their own. */
#ifndef KS_RATELIMIT_H
#define KS_RATELIMIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ks_ratelimit {
    pthread_mutex_t mu;
    double qps;     /* <= 0: no limit */
    double burst;
    double tokens;  /* may be negative: tokens promised to waiters */
    int64_t last_ns;
} ks_ratelimit;

/* burst <= 0 with qps > 0 takes client-go's default burst, 10. */
void ks_ratelimit_init(ks_ratelimit *r, double qps, int burst, int64_t now_ns);
void ks_ratelimit_destroy(ks_ratelimit *r);
/* Take a token at now_ns; returns how long (ns) the caller must wait
 * before using it (0: at once). */
int64_t ks_ratelimit_reserve(ks_ratelimit *r, int64_t now_ns);
/* Take a token only if one is there now (client-go's TryAccept). */
bool ks_ratelimit_try(ks_ratelimit *r, int64_t now_ns);
/* Tokens available at now_ns (negative: owed to waiters). */
double ks_ratelimit_tokens(ks_ratelimit *r, int64_t now_ns);

#endif

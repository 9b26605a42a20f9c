/* Time for the scheduler: the real clock, or a simulated one that only
 * moves when told to. Two implementations behind one object (clock.c);
 * nothing outside asks which one it holds. The simulator runs the real
 * scheduling loop on the simulated clock: when nothing is runnable it
 * jumps to the next timer (backoff expiry, permit timeout, flush), so a
 * simulation finishes at once and always the same way. Times are
 * nanoseconds since the epoch. */
#ifndef KS_CLOCK_H
#define KS_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define KS_NS_PER_SEC 1000000000LL
#define KS_NS_PER_MS 1000000LL

typedef struct ks_clock ks_clock;

/* The process-wide real clock (never freed). */
ks_clock *ks_clock_real(void);
ks_clock *ks_clock_sim_new(int64_t start_ns);
void ks_clock_free(ks_clock *c); /* no-op for the real clock */

int64_t ks_clock_now(const ks_clock *c);
/* Simulated clock: move to t (never backwards); the real clock ignores it. */
void ks_clock_sim_set(ks_clock *c, int64_t t);
/* Until the clock reads t: a simulated clock jumps there, the real one
 * sleeps. */
void ks_clock_wait_until(ks_clock *c, int64_t t);

/* Wait on cv until signalled or until the clock reaches deadline_ns
 * (INT64_MAX: no deadline). false on timeout. The simulated clock does
 * not wait (its time moves only when its owner moves it): false at once,
 * so a caller still short of its deadline knows no wait will get it there. */
bool ks_clock_cond_wait(const ks_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
                        int64_t deadline_ns);
/* A duration as Go's time.Duration.String() prints it ("10s", "1m30s",
 * "1.5s", "100ms", "0s"). */
void ks_format_duration(int64_t ns, char *buf, int n);
/* Monotonic real time for measurements (never simulated). */
int64_t ks_monotonic_ns(void);
/* CLOCK_REALTIME in ns since the epoch (times on the wire, expiries). */
int64_t ks_wall_ns(void);

#endif

/* A bounded set of threads running queued tasks in FIFO order: the binding
 * cycles of the real-time loop (upstream starts a goroutine per binding
 * cycle; here at most `threads` run at once and the rest wait in line).
 * Threads start as tasks need them (one when a task is queued and none
 * is idle) and stay until the pool is freed. A
 * task that waits for something (a Permit verdict) should not be queued
 * until it can run: tasks hold their thread while they run. */
#ifndef KS_TASKPOOL_H
#define KS_TASKPOOL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ks_taskpool ks_taskpool;

ks_taskpool *ks_taskpool_new(int threads);
/* Queue fn(arg). Allowed from any thread until ks_taskpool_free starts,
 * and from the pool's own tasks until it ends. */
void ks_taskpool_submit(ks_taskpool *p, void (*fn)(void *arg), void *arg);
/* Wait until nothing is queued or running, or until deadline_ns on the
 * real clock (INT64_MAX: no deadline). false on timeout. */
bool ks_taskpool_wait_idle(ks_taskpool *p, int64_t deadline_ns);
/* Tasks queued or running. */
uint32_t ks_taskpool_busy(ks_taskpool *p);
/* Threads started so far. */
int ks_taskpool_threads(ks_taskpool *p);
/* Run every queued task (and those they queue), then join the threads. */
void ks_taskpool_free(ks_taskpool *p);

#endif

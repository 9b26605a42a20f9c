#include "util/taskpool.h"
#include "util/clock.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct task {
    void (*fn)(void *arg);
    void *arg;
    struct task *next;
} task;

struct ks_taskpool {
    pthread_mutex_t mu;
    pthread_cond_t work_cv, idle_cv;
    task *head, **tail;
    uint32_t queued, running;
    bool closing;
    pthread_t *threads;
    int nthreads, max;
};

static void *pool_main(void *arg) {
    pthread_setname_np(pthread_self(), "taskpool"); /* top -H, pprof's thread label */
    ks_taskpool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->closing) pthread_cond_wait(&p->work_cv, &p->mu);
        task *t = p->head;
        if (!t) break; /* closing and nothing left */
        p->head = t->next;
        if (!p->head) p->tail = &p->head;
        p->queued--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        t->fn(t->arg);
        free(t);
        pthread_mutex_lock(&p->mu);
        p->running--;
        if (!p->queued && !p->running) pthread_cond_broadcast(&p->idle_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

ks_taskpool *ks_taskpool_new(int threads) {
    ks_taskpool *p = ks_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->idle_cv, NULL);
    p->tail = &p->head;
    p->max = threads < 1 ? 1 : threads;
    p->threads = ks_xcalloc((size_t)p->max, sizeof(*p->threads));
    return p;
}

void ks_taskpool_submit(ks_taskpool *p, void (*fn)(void *), void *arg) {
    task *t = ks_xmalloc(sizeof(*t));
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&p->mu);
    /* A thread is started only when every one is taken by a task: the
     * pool holds as many threads as tasks ever ran at once, up to its
     * size, instead of its size from the start. */
    if ((int)(p->queued + 1) > p->nthreads - (int)p->running && p->nthreads < p->max && !p->closing &&
        pthread_create(&p->threads[p->nthreads], NULL, pool_main, p) == 0)
        p->nthreads++;
    if (!p->nthreads) {
        /* no thread could be created: the task runs here */
        pthread_mutex_unlock(&p->mu);
        free(t);
        fn(arg);
        return;
    }
    *p->tail = t;
    p->tail = &t->next;
    p->queued++;
    pthread_cond_signal(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
}

bool ks_taskpool_wait_idle(ks_taskpool *p, int64_t deadline_ns) {
    ks_clock *real = ks_clock_real();
    pthread_mutex_lock(&p->mu);
    bool idle = true;
    while (p->queued || p->running) {
        if (!ks_clock_cond_wait(real, &p->idle_cv, &p->mu, deadline_ns)) {
            idle = !p->queued && !p->running;
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return idle;
}

uint32_t ks_taskpool_busy(ks_taskpool *p) {
    pthread_mutex_lock(&p->mu);
    uint32_t n = p->queued + p->running;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int ks_taskpool_threads(ks_taskpool *p) {
    pthread_mutex_lock(&p->mu);
    int n = p->nthreads;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void ks_taskpool_free(ks_taskpool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->closing = true;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->idle_cv);
    free(p);
}

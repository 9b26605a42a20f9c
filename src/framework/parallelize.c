#include "framework/parallelize.h"
#include "util/clock.h"
#include "util/xalloc.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct job {
    size_t n, chunk;
    void (*fn)(size_t i, void *arg);
    void *arg;
    atomic_bool *stop;
    atomic_size_t next; /* next chunk start */
} job;

struct ks_parallelizer {
    int parallelism;
    int nthreads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    pthread_mutex_t job_mu; /* one job at a time */
    job *cur;
    atomic_uint_fast64_t job_seq; /* bumped per job (under mu): workers join each job once */
    atomic_int busy;        /* workers inside the current job (changed under mu) */
    int sleeping;           /* workers waiting on work_cv */
    atomic_bool quit;
};

/* A scheduling cycle runs several jobs a few microseconds apart (PreFilter
 * passes, Filter, PreScore passes, Score) and the next cycle's first job
 * follows within tens of microseconds: a worker that goes to sleep after
 * each costs a futex wake-up and two context switches per job, a fifth of
 * a busy scheduler's time. Workers (and the caller waiting for them) spin
 * this long before they sleep; longer spins cost more than they save when
 * other processes want the CPUs (measured on 2 cores). */
#define SPIN_NS 30000

/* The caller runs a job alone for this long before it shares the rest
 * with the helpers. A Filter or Score pass over a few hundred nodes takes
 * 20-80 us; on 2 CPUs shared with other work, handing half of it to a
 * helper (a wake-up, or a helper spinning between jobs, and a wait for the
 * slower half) cost more CPU and more wall time than it saved at every
 * budget below about 100 us (bench, 5000 nodes). Longer jobs (preemption's
 * dry runs, large clusters) are still shared. */
#define SHARE_AFTER_NS 200000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spin until cond(arg) or SPIN_NS have passed; the clock is read every
 * 64 rounds. */
static bool spin_until(bool (*cond)(ks_parallelizer *p, uint64_t seen), ks_parallelizer *p, uint64_t seen) {
    int64_t deadline = ks_monotonic_ns() + SPIN_NS;
    for (unsigned k = 1;; k++) {
        if (cond(p, seen)) return true;
        if ((k & 63) == 0 && ks_monotonic_ns() >= deadline) return false;
        cpu_relax();
    }
}

static bool job_posted(ks_parallelizer *p, uint64_t seen) {
    return atomic_load_explicit(&p->job_seq, memory_order_relaxed) != seen ||
           atomic_load_explicit(&p->quit, memory_order_relaxed);
}

static bool workers_done(ks_parallelizer *p, uint64_t unused) { return atomic_load(&p->busy) == 0; }

/* Set while a thread runs job work: a nested ks_parallelize from inside
 * fn runs inline instead of waiting for workers that are all busy. */
static _Thread_local bool in_job;

size_t ks_parallelize_chunk_size(size_t n, int parallelism) {
    if (parallelism < 1) parallelism = 1;
    size_t s = (size_t)sqrt((double)n);
    size_t r = n / (size_t)parallelism + 1;
    if (s > r) s = r;
    else if (s < 1) s = 1;
    return s;
}

static void run_chunks(job *j) {
    bool was = in_job;
    in_job = true;
    for (;;) {
        if (j->stop && atomic_load(j->stop)) break;
        size_t start = atomic_fetch_add(&j->next, j->chunk);
        if (start >= j->n) break;
        size_t end = start + j->chunk;
        if (end > j->n) end = j->n;
        for (size_t i = start; i < end; i++) j->fn(i, j->arg);
    }
    in_job = was;
}

/* Items run once the job is over: every claimed chunk ran, claims are
 * made in order, a claim past the end stops the claimer. */
static size_t ran(job *j) {
    size_t next = atomic_load(&j->next);
    return next < j->n ? next : j->n;
}

static void *worker(void *arg) {
    pthread_setname_np(pthread_self(), "parallelize"); /* top -H, pprof's thread label */
    ks_parallelizer *p = arg;
    uint64_t seen = 0;
    for (;;) {
        spin_until(job_posted, p, seen);
        pthread_mutex_lock(&p->mu);
        while (!atomic_load(&p->quit) && (p->cur == NULL || atomic_load(&p->job_seq) == seen)) {
            p->sleeping++;
            pthread_cond_wait(&p->work_cv, &p->mu);
            p->sleeping--;
        }
        if (atomic_load(&p->quit)) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        seen = atomic_load(&p->job_seq);
        job *j = p->cur;
        atomic_fetch_add(&p->busy, 1);
        pthread_mutex_unlock(&p->mu);
        run_chunks(j);
        pthread_mutex_lock(&p->mu);
        if (atomic_fetch_sub(&p->busy, 1) == 1) pthread_cond_broadcast(&p->done_cv);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

ks_parallelizer *ks_parallelizer_new(int parallelism) {
    ks_parallelizer *p = ks_xcalloc(1, sizeof(*p));
    if (parallelism < 1) parallelism = 1;
    p->parallelism = parallelism;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->job_mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    /* The calling thread works too: parallelism - 1 helpers, but no more
     * threads than CPUs: results do not depend on the thread count (see
     * the header), and extra threads only cost wake-ups. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = parallelism;
    if (cpus > 0 && threads > cpus) threads = (int)cpus;
    p->nthreads = threads - 1;
    if (p->nthreads > 0) {
        p->threads = ks_xcalloc((size_t)p->nthreads, sizeof(pthread_t));
        for (int i = 0; i < p->nthreads; i++) {
            if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
                p->nthreads = i;
                break;
            }
        }
    }
    return p;
}

void ks_parallelizer_free(ks_parallelizer *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->quit, true);
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->job_mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p);
}

int ks_parallelizer_parallelism(const ks_parallelizer *p) { return p ? p->parallelism : 1; }

/* Runs j from item `from` on the calling thread, one item at a time,
 * checking stop after each, until the end, stop, or (budget_ns >= 0) the
 * budget has passed since t0 (the clock is read between chunks). Returns
 * the next item to run; *stopped when stop was raised. */
static size_t run_alone(job *j, size_t from, int64_t t0, int64_t budget_ns, bool *stopped) {
    size_t i = from;
    *stopped = false;
    while (i < j->n) {
        size_t end = i + j->chunk;
        if (end > j->n) end = j->n;
        for (; i < end; i++) {
            j->fn(i, j->arg);
            if (j->stop && atomic_load_explicit(j->stop, memory_order_relaxed)) {
                *stopped = true;
                return i + 1;
            }
        }
        if (budget_ns >= 0 && ks_monotonic_ns() - t0 >= budget_ns) break;
    }
    return i;
}

size_t ks_parallelize(ks_parallelizer *p, size_t n, void (*fn)(size_t i, void *arg), void *arg,
                      atomic_bool *stop) {
    if (n == 0 || (stop && atomic_load(stop))) return 0;
    job j = {.n = n, .fn = fn, .arg = arg, .stop = stop};
    int par = p ? p->parallelism : 1;
    j.chunk = ks_parallelize_chunk_size(n, par);
    atomic_init(&j.next, 0);
    size_t chunks = (n + j.chunk - 1) / j.chunk;
    bool can_share = p && p->nthreads > 0 && chunks > 1 && !in_job;

    /* Alone first: a job that ends within the budget never pays for a
     * helper. Alone, the caller stops right after the item that raised
     * stop, which keeps the items run a prefix. */
    bool was = in_job, stopped;
    in_job = true;
    size_t next = run_alone(&j, 0, ks_monotonic_ns(), can_share ? SHARE_AFTER_NS : -1, &stopped);
    if (!stopped && next < n && pthread_mutex_trylock(&p->job_mu) != 0)
        next = run_alone(&j, next, 0, -1, &stopped); /* the pool is busy with another thread's job */
    in_job = was;
    if (stopped || next >= n) return next;

    /* Share the rest: chunks from `next` on, claimed in order. */
    atomic_store(&j.next, next);
    size_t left = (n - next + j.chunk - 1) / j.chunk;
    pthread_mutex_lock(&p->mu);
    p->cur = &j;
    atomic_fetch_add(&p->job_seq, 1);
    /* Wake only as many sleeping helpers as there are chunks for (the
     * spinning ones see job_seq move). */
    size_t wake = left - 1 < (size_t)p->nthreads ? left - 1 : (size_t)p->nthreads;
    if (wake > (size_t)p->sleeping) wake = (size_t)p->sleeping;
    for (size_t i = 0; i < wake; i++) pthread_cond_signal(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    run_chunks(&j);
    pthread_mutex_lock(&p->mu);
    /* Workers that have not picked the job up yet must not start it once
     * we return (j lives on our stack): clear it, then wait for those
     * already inside. */
    p->cur = NULL;
    if (atomic_load(&p->busy) > 0) {
        pthread_mutex_unlock(&p->mu);
        spin_until(workers_done, p, 0);
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->busy) > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->job_mu);
    return ran(&j);
}

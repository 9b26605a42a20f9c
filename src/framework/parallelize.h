/* The worker pool behind Filter and Score (upstream parallelize): a fixed
 * set of threads that split [0, n) into chunks of about sqrt(n) and call
 * fn(i, arg) for each index. The calling thread runs a job alone for its
 * first 200 us (most jobs end there) and then shares the remaining chunks.
 * Chunks are handed out in increasing order and every chunk handed out is
 * finished, so when `stop` is raised the indexes processed always form a
 * prefix of [0, n): a search that stops early gives the same answer as a
 * sequential one, whatever the thread timing. */
#ifndef KS_PARALLELIZE_H
#define KS_PARALLELIZE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define KS_DEFAULT_PARALLELISM 16

typedef struct ks_parallelizer ks_parallelizer;

/* parallelism <= 1 runs everything on the calling thread. */
ks_parallelizer *ks_parallelizer_new(int parallelism);
void ks_parallelizer_free(ks_parallelizer *p);
int ks_parallelizer_parallelism(const ks_parallelizer *p);

/* Run fn over [0, n). When stop is non-NULL, no new chunk starts once
 * *stop is true. Returns when every started chunk has finished, with the
 * number of items run: chunks start in order, so they are [0, returned).
 * Safe to call from several threads (jobs are serialized) and from inside
 * fn (nested calls run inline). */
size_t ks_parallelize(ks_parallelizer *p, size_t n, void (*fn)(size_t i, void *arg), void *arg,
                      atomic_bool *stop);

/* Upstream's chunk size: min(sqrt(n), n/parallelism + 1), at least 1. */
size_t ks_parallelize_chunk_size(size_t n, int parallelism);

#endif

/* Event replay (`ksched simulate --replay EVENTS`, a testing mode): the
 * differential harness's "Event replay" (docs/reference-harness.md). The
 * real scheduler, on the in-memory cluster and a simulated clock, is fed
 * a sequence of steps (cluster changes, attempts, clock ticks, timer
 * flushes) read from a JSON-lines file; after each step one
 * ksched-replay/v1 line says which pods moved between activeQ, backoffQ
 * and the unschedulable pods, so that the queueing hints and the queue
 * can be compared with upstream's PriorityQueue event by event. */
#ifndef KS_REPLAY_H
#define KS_REPLAY_H

#include "sim/simulate.h"

#include <stdio.h>

bool ks_replay_run(FILE *out, ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const char *events_path,
                   char **err);

#endif

/* Trace mode (`ksched simulate -o trace`): the reference loop of
 * docs/reference-harness.md — passes over the pending pods in a fixed
 * order, every attempt printed as ksched-trace/v1 JSON — so that the
 * differential tests can compare ksched with upstream kube-scheduler
 * decision by decision. The attempts themselves are the real scheduler's. */
#ifndef KS_TRACE_H
#define KS_TRACE_H

#include "sim/simulate.h"

#include <stdio.h>

bool ks_trace_run(FILE *out, ks_cluster *cluster, const ks_config *cfg, ks_registry *reg,
                  const ks_sim_options *opts, char **err);

#endif

/* Printing a simulation: the table a person reads (-o table, with
 * --explain the per-plugin detail), the v1 List other tools read (-o json,
 * -o yaml), and the cluster-capacity style report. */
#ifndef KS_REPORT_H
#define KS_REPORT_H

#include "sim/simulate.h"

#include <jansson.h>
#include <stdio.h>

void ks_report_table(FILE *out, const ks_sim_result *r, bool explain);
/* One v1 List: pending pods (scheduling order), preemption victims, then
 * events.k8s.io/v1 Events. With explain, pods carry the
 * kube-scheduler-simulator result annotations of their last attempt. */
void ks_report_list(FILE *out, const ks_sim_result *r, bool explain, bool yaml);

/* Prints doc (taken: freed here) as indented JSON, or as YAML with yaml;
 * source names it in a parse error (none is expected). */
void ks_report_print_doc(FILE *out, json_t *doc, const char *source, bool yaml);

/* RFC 3339 in UTC, seconds ("2026-11-21T09:00:00Z") or microseconds. */
void ks_format_time(int64_t ns, bool micro, char *buf, size_t n);

#endif

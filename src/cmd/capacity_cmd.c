/* ksched capacity POD.yaml PATH... : how many more replicas of a pod fit on
 * the cluster, where they would go, and what stops the next one. */
#include "api/quantity.h"
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/flags.h"
#include "cmd/live.h"
#include "cmd/plugin_opts.h"
#include "sim/capacity.h"
#include "sim/report_html.h"
#include "sim/simulate.h"
#include "util/log.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f, const void *arg) {
    fputs("usage: ksched capacity POD.yaml PATH... [options]\n"
          "       ksched capacity --kubeconfig FILE POD.yaml [PATH...] [options]\n"
          "\n"
          "Schedule replicas of the pod in POD.yaml onto the cluster in PATH, one at a\n"
          "time, until one does not fit; report how many fit, where, and why the next\n"
          "one does not. Replicas never preempt running pods.\n"
          "\n"
          "options:\n"
          "  --max N              stop after N replicas\n"
          "  --config FILE        KubeSchedulerConfiguration (default: v1.34 defaults)\n"
          "  -o, --output FORMAT  table (default), json or html (one self-contained page)\n"
          "  --output-file FILE   write the output there instead of to stdout\n"
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_CLI_LIVE_USAGE KS_PLUGIN_OPTS_USAGE
              KS_FEATURE_GATES_USAGE
          "  -h, --help           this text\n",
          f);
}

static int cmp_node(const void *a, const void *b) {
    return strcmp(ks_str(((const ks_capacity_node *)a)->node), ks_str(((const ks_capacity_node *)b)->node));
}

static void print_table(FILE *out, const ks_pod *tmpl, const ks_workload *wl, const ks_capacity_result *r) {
    char cpu[32], mem[32];
    ks_quantity_format_milli(tmpl->requests.milli_cpu, cpu, sizeof(cpu));
    ks_quantity_format_bytes(tmpl->requests.memory, mem, sizeof(mem));
    if (wl)
        fprintf(out, "%s %s/%s: each replica (pod %s) requests cpu %s, memory %s.\n", ks_workload_kind_name(wl->kind),
                ks_str(wl->ns), ks_str(wl->name), ks_str(tmpl->name), cpu, mem);
    else
        fprintf(out, "Pod %s/%s requests cpu %s, memory %s.\n", ks_str(tmpl->ns), ks_str(tmpl->name), cpu, mem);
    fprintf(out, "%u more replica%s fit%s.\n", r->replicas, r->replicas == 1 ? "" : "s",
           r->hit_max ? " (stopped at --max)" : "");
    if (r->nper_node) {
        size_t w = 4;
        for (uint32_t i = 0; i < r->nper_node; i++)
            if (ks_strlen(r->per_node[i].node) > w) w = ks_strlen(r->per_node[i].node);
        fprintf(out, "\n%-*s  REPLICAS\n", (int)w, "NODE");
        for (uint32_t i = 0; i < r->nper_node; i++)
            fprintf(out, "%-*s  %u\n", (int)w, ks_str(r->per_node[i].node), r->per_node[i].replicas);
    }
    if (r->message) {
        fprintf(out, "\nThe next replica does not fit: %s\n", r->message);
        if (r->nreasons) {
            size_t w = 6;
            for (uint32_t i = 0; i < r->nreasons; i++)
                if (strlen(r->reasons[i].reason) > w) w = strlen(r->reasons[i].reason);
            fprintf(out, "\n%-*s  NODES\n", (int)w, "REASON");
            for (uint32_t i = 0; i < r->nreasons; i++)
                fprintf(out, "%-*s  %u\n", (int)w, r->reasons[i].reason, r->reasons[i].nodes);
        }
    }
}

static void print_json(FILE *out, const ks_pod *tmpl, const ks_workload *w, const ks_capacity_result *r) {
    json_t *o = json_object(), *nodes = json_object(), *reasons = json_object();
    char *pod = NULL;
    int n = asprintf(&pod, "%s/%s", ks_str(tmpl->ns), ks_str(tmpl->name));
    (void)n;
    if (w) {
        char *wn = NULL;
        n = asprintf(&wn, "%s/%s", ks_str(w->ns), ks_str(w->name));
        json_object_set_new(o, "kind", json_string(ks_workload_kind_name(w->kind)));
        json_object_set_new(o, "workload", json_string(wn));
        free(wn);
    }
    json_object_set_new(o, "pod", json_string(pod));
    free(pod);
    json_object_set_new(o, "replicas", json_integer(r->replicas));
    json_object_set_new(o, "stoppedAtMax", json_boolean(r->hit_max));
    for (uint32_t i = 0; i < r->nper_node; i++)
        json_object_set_new(nodes, ks_str(r->per_node[i].node), json_integer(r->per_node[i].replicas));
    json_object_set_new(o, "nodes", nodes);
    if (r->message) {
        json_t *f = json_object();
        json_object_set_new(f, "message", json_string(r->message));
        for (uint32_t i = 0; i < r->nreasons; i++)
            json_object_set_new(reasons, r->reasons[i].reason, json_integer(r->reasons[i].nodes));
        json_object_set_new(f, "reasons", reasons);
        json_object_set_new(o, "failure", f);
    } else {
        json_decref(reasons);
    }
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fprintf(out, "%s\n", s);
    free(s);
    json_decref(o);
}

typedef struct capacity_cmd {
    int argc;
    char **argv; /* for the page's record of the command */
    ks_cli_common co;
    ks_cli_live live;
    const char **paths; /* POD.yaml, then the cluster */
    size_t npaths;
    uint64_t max;
} capacity_cmd;

static int parse(capacity_cmd *c, int argc, char **argv) {
    const ks_flag flags[] = {KS_U64_FLAG("max", &c->max, 1000000)};
    const ks_flag_group groups[] = {ks_flags_common(&c->co), ks_flags_live(&c->live)};
    ks_cmd_line cl = {.cmd = "capacity", .usage = usage, .flags = flags, .nflags = KS_FLAGS_N(flags),
                      .groups = groups, .ngroups = KS_FLAGS_N(groups), .args = c->paths, .nargs = &c->npaths};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc >= 0) return rc;
    if (c->npaths < (ks_cli_live_is_live(&c->live) ? 1u : 2u)) {
        fprintf(stderr, "ksched capacity: need POD.yaml and at least one cluster PATH\n");
        usage(stderr, NULL);
        return KS_EXIT_BAD_INPUT;
    }
    const char *o = c->co.output;
    if (strcmp(o, "table") && strcmp(o, "json") && strcmp(o, "html")) {
        fprintf(stderr, "ksched capacity: unknown output format \"%s\" (table, json, html)\n", o);
        return KS_EXIT_BAD_INPUT;
    }
    return -1;
}

/* The first workload a file defines that makes pods itself. */
static const ks_workload *source_workload(const ks_cluster *c) {
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *w = c->workloads.v[i];
        if (w->kind != KS_WORKLOAD_SERVICE && !w->owner_kind) return w;
    }
    return NULL;
}

/* A DaemonSet: the nodes it targets, and those where its pod does not fit. */
static void daemonset_print(FILE *out, const ks_workload *w, const ks_sim_result *res, int32_t targeted, bool json) {
    const ks_sim_workload *g = NULL;
    for (uint32_t i = 0; i < res->nworkloads; i++)
        if (res->workloads[i].workload == w) g = &res->workloads[i];
    uint32_t fit = g ? g->scheduled : 0, running = g ? g->running : 0, pending = g ? g->pending : 0;
    json_t *o = json ? json_object() : NULL, *nf = json ? json_array() : NULL;
    if (o) {
        char name[600];
        snprintf(name, sizeof(name), "%s/%s", ks_str(w->ns), ks_str(w->name));
        json_object_set_new(o, "kind", json_string("DaemonSet"));
        json_object_set_new(o, "workload", json_string(name));
        json_object_set_new(o, "targetedNodes", json_integer(targeted));
        json_object_set_new(o, "running", json_integer(running));
        json_object_set_new(o, "fit", json_integer(fit));
    } else {
        fprintf(out, "DaemonSet %s/%s targets %d node%s: %u already run its pod, %u more fit, %u do not.\n",
                ks_str(w->ns), ks_str(w->name), targeted, targeted == 1 ? "" : "s", running, fit, pending);
    }
    size_t width = 4;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && pending && !o) fprintf(out, "\n%-*s  WHY ITS POD DOES NOT FIT\n", (int)width, "NODE");
        for (uint32_t i = 0; i < res->npods; i++) {
            const ks_sim_pod *p = &res->pods[i];
            if (!g || p->workload != (int32_t)(g - res->workloads) || p->state == KS_SIM_SCHEDULED) continue;
            /* the pod is pinned to its node by the controller's matchFields term */
            const ks_node_selector *ns = &p->input->required_node_affinity;
            const char *node = ns->nterms && ns->terms[0].nfields && ns->terms[0].fields[0].nvalues
                                   ? ks_str(ns->terms[0].fields[0].values[0])
                                   : "?";
            if (pass == 0) {
                if (strlen(node) > width) width = strlen(node);
            } else if (o) {
                json_t *e = json_object();
                json_object_set_new(e, "node", json_string(node));
                json_object_set_new(e, "message", json_string(p->message ? p->message : ""));
                json_array_append_new(nf, e);
            } else {
                fprintf(out, "%-*s  %s\n", (int)width, node, p->message ? p->message : ks_sim_state_name(p->state));
            }
        }
    }
    if (o) {
        json_object_set_new(o, "notFit", nf);
        char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fprintf(out, "%s\n", s);
        free(s);
        json_decref(o);
    }
}

static int daemonset_report(capacity_cmd *c, ks_cluster *cluster, const ks_config *cfg, const ks_workload *w) {
    if (!strcmp(c->co.output, "html")) {
        fprintf(stderr, "ksched capacity: -o html does not show a DaemonSet's report yet (table, json)\n");
        return KS_EXIT_BAD_INPUT;
    }
    ks_sim_result res;
    int32_t targeted = 0;
    char *err = NULL;
    if (!ks_capacity_daemonset(cluster, cfg, ks_default_registry(), w, 1, &res, &targeted, &err)) {
        fprintf(stderr, "ksched capacity: %s\n", err);
        free(err);
        return KS_EXIT_BAD_INPUT;
    }
    int rc = KS_EXIT_BAD_INPUT;
    FILE *out = ks_cli_output_open(&c->co, "capacity");
    if (out) {
        daemonset_print(out, w, &res, targeted, !strcmp(c->co.output, "json"));
        if (ks_cli_output_close(&c->co, out, "capacity")) rc = KS_EXIT_OK;
    }
    ks_sim_result_free(&res);
    return rc;
}

/* tmpl: the pod given; or source: the workload whose replicas are tried. */
static int report(capacity_cmd *c, ks_cluster *cluster, const ks_config *cfg, const ks_pod *tmpl,
                  const ks_workload *source) {
    ks_capacity_result res;
    char *err = NULL;
    ks_pod *first = NULL;
    bool ok = source ? ks_capacity_workload(cluster, cfg, ks_default_registry(), source, 1, (uint32_t)c->max, &res,
                                            &first, &err)
                     : ks_capacity(cluster, cfg, ks_default_registry(), tmpl, (uint32_t)c->max, &res, &err);
    if (first) tmpl = first;
    if (!ok) {
        fprintf(stderr, "ksched capacity: %s\n", err);
        free(err);
        if (first) ks_pod_unref(first);
        return KS_EXIT_BAD_INPUT;
    }
    if (res.nper_node) qsort(res.per_node, res.nper_node, sizeof(*res.per_node), cmp_node);
    int rc = KS_EXIT_BAD_INPUT;
    FILE *out = ks_cli_output_open(&c->co, "capacity");
    if (out) {
        if (!strcmp(c->co.output, "json")) {
            print_json(out, tmpl, source, &res);
        } else if (!strcmp(c->co.output, "html")) {
            ks_report_inputs in = {.command = "capacity", .argc = c->argc, .argv = c->argv, .paths = c->paths,
                                   .npaths = c->npaths, .config_path = c->co.config_path, .seed = 1};
            ks_report_html_capacity(out, cluster, tmpl, &res, &in);
        } else {
            print_table(out, tmpl, source, &res);
        }
        if (ks_cli_output_close(&c->co, out, "capacity")) rc = KS_EXIT_OK;
    }
    ks_capacity_result_free(&res);
    if (first) ks_pod_unref(first);
    return rc;
}

static int run(capacity_cmd *c) {
    int rc = KS_EXIT_BAD_INPUT;
    ks_cluster *cluster = NULL, *tc = NULL;
    ks_wl_generated gen = {0};
    ks_config *cfg = ks_cli_common_setup(&c->co, "capacity");
    if (!cfg) goto out;
    tc = ks_cli_load_cluster(c->paths, 1);
    if (!tc) goto out;
    const ks_workload *source = tc->pods.n ? NULL : source_workload(tc);
    if (tc->pods.n == 0 && !source) {
        fprintf(stderr, "ksched capacity: %s: no Pod or workload (Deployment, ReplicaSet, StatefulSet, DaemonSet, "
                        "Job, CronJob, ReplicationController) found\n", c->paths[0]);
        goto out;
    }
    cluster = ks_cli_live_cluster(&c->live, c->paths + 1, c->npaths - 1, "capacity");
    /* the cluster's own workloads make their pods first */
    if (!cluster || !ks_cli_expand_workloads(cluster, 1, true, &gen, "capacity")) goto out;
    if (source && source->kind == KS_WORKLOAD_DAEMONSET) rc = daemonset_report(c, cluster, cfg, source);
    else rc = report(c, cluster, cfg, source ? NULL : tc->pods.v[0], source);
out:
    ks_wl_generated_free(&gen);
    if (cluster) ks_cluster_free(cluster);
    if (tc) ks_cluster_free(tc);
    if (cfg) ks_config_free(cfg);
    return rc;
}

int cmd_capacity(int argc, char **argv) {
    capacity_cmd c = {.argc = argc, .argv = argv, .co = {.output = "table"},
                      .paths = calloc((size_t)argc, sizeof(char *))};
    int rc = parse(&c, argc, argv);
    if (rc < 0) rc = run(&c);
    free(c.paths);
    ks_cli_common_free(&c.co);
    ks_cli_live_free(&c.live);
    return rc;
}

/* ksched capacity POD.yaml PATH... : how many more replicas of a pod fit on
 * the cluster, where they would go, and what stops the next one. */
#include "api/quantity.h"
#include "cmd/common.h"
#include "cmd/live.h"
#include "cmd/plugin_opts.h"
#include "sim/capacity.h"
#include "sim/report_html.h"
#include "util/log.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_capacity(int argc, char **argv);

static void usage(FILE *f) {
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

static void print_table(FILE *out, const ks_pod *tmpl, const ks_capacity_result *r) {
    char cpu[32], mem[32];
    ks_quantity_format_milli(tmpl->requests.milli_cpu, cpu, sizeof(cpu));
    ks_quantity_format_bytes(tmpl->requests.memory, mem, sizeof(mem));
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

static void print_json(FILE *out, const ks_pod *tmpl, const ks_capacity_result *r) {
    json_t *o = json_object(), *nodes = json_object(), *reasons = json_object();
    char *pod = NULL;
    int n = asprintf(&pod, "%s/%s", ks_str(tmpl->ns), ks_str(tmpl->name));
    (void)n;
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

int cmd_capacity(int argc, char **argv) {
    ks_cli_common co = {.output = "table"};
    ks_cli_live live = {0};
    const char **paths = calloc((size_t)argc, sizeof(char *));
    size_t npaths = 0;
    uint64_t max = 0;
    char *err = NULL;
    int rc = 2;
    ks_cluster *cluster = NULL, *tc = NULL;
    ks_config *cfg = NULL;

    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        int r = ks_cli_common_parse(&co, argc, argv, &i, &err);
        if (r < 0) goto usage_error;
        if (r > 0) continue;
        if ((r = ks_cli_live_parse(&live, argc, argv, &i, &err)) < 0) goto usage_error;
        if (r > 0) continue;
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (ks_cli_value(argc, argv, &i, "max", &val, &err)) {
            if (!val || !ks_cli_u64(val, &max) || max > 1000000) {
                fprintf(stderr, "ksched capacity: invalid value for --max\n");
                goto out;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ksched capacity: unknown option %s\n", a);
            usage(stderr);
            goto out;
        } else {
            paths[npaths++] = a;
        }
    }
    if (npaths < (ks_cli_live_is_live(&live) ? 1u : 2u)) {
        fprintf(stderr, "ksched capacity: need POD.yaml and at least one cluster PATH\n");
        usage(stderr);
        goto out;
    }
    if (strcmp(co.output, "table") && strcmp(co.output, "json") && strcmp(co.output, "html")) {
        fprintf(stderr, "ksched capacity: unknown output format \"%s\" (table, json, html)\n", co.output);
        goto out;
    }
    cfg = ks_cli_common_setup(&co, "capacity");
    if (!cfg) goto out;
    tc = ks_cli_load_cluster(paths, 1);
    if (!tc) goto out;
    if (tc->pods.n == 0) {
        fprintf(stderr, "ksched capacity: %s: no Pod found\n", paths[0]);
        goto out;
    }
    cluster = ks_cli_live_cluster(&live, paths + 1, npaths - 1, "capacity");
    if (!cluster) goto out;

    ks_capacity_result res;
    const ks_pod *tmpl = tc->pods.v[0];
    if (!ks_capacity(cluster, cfg, ks_default_registry(), tmpl, (uint32_t)max, &res, &err)) {
        fprintf(stderr, "ksched capacity: %s\n", err);
        goto out;
    }
    if (res.nper_node) qsort(res.per_node, res.nper_node, sizeof(*res.per_node), cmp_node);
    FILE *out = ks_cli_output_open(&co, "capacity");
    if (out) {
        if (!strcmp(co.output, "json")) {
            print_json(out, tmpl, &res);
        } else if (!strcmp(co.output, "html")) {
            ks_report_inputs in = {.command = "capacity", .argc = argc, .argv = argv, .paths = paths,
                                   .npaths = npaths, .config_path = co.config_path, .seed = 1};
            ks_report_html_capacity(out, cluster, tmpl, &res, &in);
        } else {
            print_table(out, tmpl, &res);
        }
        if (ks_cli_output_close(&co, out, "capacity")) rc = 0;
    }
    ks_capacity_result_free(&res);
    goto out;
usage_error:
    fprintf(stderr, "ksched capacity: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    free(err);
    free(paths);
    ks_cli_common_free(&co);
    ks_cli_live_free(&live);
    if (cluster) ks_cluster_free(cluster);
    if (tc) ks_cluster_free(tc);
    if (cfg) ks_config_free(cfg);
    return rc;
}

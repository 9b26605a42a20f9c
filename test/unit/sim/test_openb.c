/* The openb trace reader (src/sim/openb.c): the gpu-study fixtures read
 * field by field, the errors a malformed file gets (file:line: column),
 * and the objects made of them (node labels and GPU capacity, pod
 * annotations, the DRA form's slices and claims). */
#include "api/cluster.h"
#include "sim/openb.h"
#include "util/intern.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define NODES "test/fixtures/gpu-study/nodes.csv"
#define PODS "test/fixtures/gpu-study/pods.csv"

static void test_read_fixtures(void **st) {
    (void)st;
    ks_openb_nodes nodes = {0};
    ks_openb_tasks tasks = {0};
    char *err = NULL;
    assert_true(ks_openb_read_nodes(NODES, &nodes, &err));
    assert_true(ks_openb_read_tasks(PODS, &tasks, &err));
    assert_null(err);
    assert_int_equal(nodes.n, 41);
    assert_string_equal(nodes.v[0].name, "openb-node-0000");
    assert_int_equal(nodes.v[0].cpu_milli, 64000);
    assert_int_equal(nodes.v[0].memory_mib, 262144);
    assert_int_equal(nodes.v[0].gpus, 2);
    assert_string_equal(nodes.v[0].model, "P100");
    assert_int_equal(nodes.v[0].line, 2);
    assert_int_equal(tasks.n, 204);
    const ks_openb_task *t = &tasks.v[0];
    assert_string_equal(t->name, "openb-pod-0000");
    assert_int_equal(t->cpu_milli, 12000);
    assert_int_equal(t->num_gpu, 1);
    assert_int_equal(t->gpu_milli, 1000);
    assert_int_equal(ks_openb_task_gpu_milli(t), 1000);
    assert_string_equal(t->gpu_spec, "");
    assert_int_equal(t->creation, 0);
    assert_int_equal(t->deletion, 12537496);
    assert_int_equal(tasks.v[1].gpu_milli, 230);
    assert_string_equal(tasks.v[8].gpu_spec, "G2|P100|T4|V100M16|V100M32");
    assert_int_equal(tasks.v[8].line, 10);
    assert_int_equal(tasks.v[23].num_gpu, 0); /* openb-pod-0920: Pending, no scheduled time */
    assert_int_equal(tasks.v[23].gpu_milli, 0);
    assert_int_equal(tasks.v[23].scheduled, -1);
    ks_openb_nodes_free(&nodes);
    ks_openb_tasks_free(&tasks);
}

/* Writes text to a temporary file and reads it as nodes (or tasks);
 * returns the error, which must name want. */
static void expect_error(bool as_nodes, const char *text, const char *want) {
    char path[] = "/tmp/ksched_test_openb_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char *err = NULL;
    bool ok;
    if (as_nodes) {
        ks_openb_nodes n = {0};
        ok = ks_openb_read_nodes(path, &n, &err);
        ks_openb_nodes_free(&n);
    } else {
        ks_openb_tasks t = {0};
        ok = ks_openb_read_tasks(path, &t, &err);
        ks_openb_tasks_free(&t);
    }
    unlink(path);
    assert_false(ok);
    assert_non_null(err);
    if (!strstr(err, want)) fail_msg("error \"%s\" does not name \"%s\"", err, want);
    free(err);
}

static void test_errors(void **st) {
    (void)st;
    expect_error(true, "", "empty file");
    expect_error(true, "sn,cpu_milli,memory_mib,gpu\nn1,1000,1024,0\n", ":1: no column model");
    expect_error(true, "sn,cpu_milli,memory_mib,gpu,model\nn1,x,1024,0,\n", ":2: cpu_milli: want a non-negative number, got \"x\"");
    expect_error(true, "sn,cpu_milli,memory_mib,gpu,model\nn1,-5,1024,0,\n", ":2: cpu_milli");
    expect_error(true, "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024\n", ":2: 3 fields, want 5");
    expect_error(true, "sn,cpu_milli,memory_mib,gpu,model\n,1000,1024,0,\n", ":2: sn: empty");
    expect_error(false, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,65,1000\n",
                 ":2: num_gpu: 65 is not 0 to 64");
    expect_error(false, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n,1000,1024,0,0\n", ":2: name: empty");
    char *err = NULL;
    ks_openb_nodes n = {0};
    assert_false(ks_openb_read_nodes("/nonexistent/nodes.csv", &n, &err));
    assert_non_null(strstr(err, "/nonexistent/nodes.csv"));
    free(err);
}

static void test_objects(void **st) {
    (void)st;
    ks_openb_nodes nodes = {0};
    ks_openb_tasks tasks = {0};
    char *err = NULL;
    assert_true(ks_openb_read_nodes(NODES, &nodes, &err));
    assert_true(ks_openb_read_tasks(PODS, &tasks, &err));
    ks_cluster *c = ks_cluster_new();
    const char *names[41] = {"renamed-0"};
    assert_true(ks_openb_add_nodes(c, &nodes, names, &err));
    assert_int_equal(c->nodes.n, 41);
    assert_string_equal(ks_str(c->nodes.v[0]->name), "renamed-0");
    assert_string_equal(ks_str(c->nodes.v[1]->name), "openb-node-0030");
    ks_id model = 0;
    assert_true(ks_labels_get(&c->nodes.v[0]->labels, ks_intern("alibabacloud.com/gpu-card-model"), &model));
    assert_string_equal(ks_str(model), "P100");
    uint32_t idx[2] = {1, 8};
    assert_true(ks_openb_add_pods(c, &tasks, idx, NULL, 2, "default", false, &err));
    assert_int_equal(c->pods.n, 2);
    assert_string_equal(ks_str(c->pods.v[0]->name), "openb-pod-0040");
    assert_string_equal(ks_annotations_get(&c->pods.v[0]->annotations, ks_intern("alibabacloud.com/gpu-milli")),
                        "230");
    assert_string_equal(ks_annotations_get(&c->pods.v[1]->annotations, ks_intern("alibabacloud.com/gpu-card-model")),
                        "G2|P100|T4|V100M16|V100M32");
    /* the DRA form: a DeviceClass, one slice per GPU node, a claim per GPU task */
    assert_true(ks_openb_add_dra(c, &nodes, NULL, KS_OPENB_DRA_NODE_SLICE, &err));
    assert_int_equal(c->device_classes.n, 1);
    assert_int_equal(c->resource_slices.n, 41);
    uint32_t gpu_task[1] = {0};
    const char *pod_name[1] = {"dra-pod"};
    assert_true(ks_openb_add_pods(c, &tasks, gpu_task, pod_name, 1, "default", true, &err));
    assert_int_equal(c->resource_claims.n, 1);
    assert_int_equal(c->pods.n, 3);
    /* one slice per GPU; N whole GPUs ask N requests of one device */
    ks_cluster *g = ks_cluster_new();
    assert_true(ks_openb_add_dra(g, &nodes, NULL, KS_OPENB_DRA_GPU_SLICE, &err));
    uint32_t gpus = 0;
    for (size_t i = 0; i < nodes.n; i++) gpus += (uint32_t)nodes.v[i].gpus;
    assert_int_equal(g->resource_slices.n, gpus);
    uint32_t multi[1] = {0};
    while (multi[0] < tasks.n && tasks.v[multi[0]].num_gpu < 2) multi[0]++;
    assert_true(multi[0] < tasks.n);
    assert_true(ks_openb_add_pods(g, &tasks, multi, NULL, 1, "default", KS_OPENB_DRA_GPU_SLICE, &err));
    assert_int_equal(g->resource_claims.n, 1);
    assert_int_equal(g->resource_claims.v[0]->nrequests, (uint32_t)tasks.v[multi[0]].num_gpu);
    ks_cluster_free(g);
    /* a name that cannot go into an object */
    const char *bad[1] = {"bad\"name"};
    assert_false(ks_openb_add_pods(c, &tasks, gpu_task, bad, 1, "default", false, &err));
    assert_non_null(strstr(err, "unexpected characters"));
    free(err);
    ks_cluster_free(c);
    ks_openb_nodes_free(&nodes);
    ks_openb_tasks_free(&tasks);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_fixtures),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

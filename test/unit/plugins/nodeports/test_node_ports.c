/* NodePorts: host port conflicts (cases from upstream node_ports_test.go). */
#include "testutil_plugins.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_node_ports;

#define CONFLICT "Unschedulable: node(s) didn't have free ports for the requested pod ports"

/* A pod with one container using "PROTO/IP/PORT" host ports. */
static ks_pod *pod_ports(const char *name, const char *const *ports) {
    ks_pod *p = tp_pod(name);
    ks_container *c = tp_container(p, TP_NONE, TP_NONE);
    for (; *ports; ports++) {
        char proto[8], ip[64];
        int port;
        if (sscanf(*ports, "%7[^/]/%63[^/]/%d", proto, ip, &port) != 3) fail();
        tp_container_port(p, c, port, proto, ip);
    }
    return tp_pod_done(p);
}

/* Verdict for pod (ports want) on a node running a pod with ports have. */
static const char *verdict(const char *const *want, const char *const *have) {
    static char buf[256];
    ks_pod *pod = pod_ports("incoming", want);
    ks_pod *existing = pod_ports("existing", have);
    ks_node *n = tp_node("node");
    ks_node_info *ni = tp_node_info(n, &existing, 1);
    snprintf(buf, sizeof(buf), "%s", tp_filter1(&ks_plugin_node_ports, pod, ni));
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(existing);
    ks_pod_unref(pod);
    return buf;
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static void prefilter_skips_pod_without_host_ports(void **st) {
    ks_pod *pod = tp_pod_done(tp_pod("p"));
    ks_node *n = tp_node("node");
    ks_node_info *ni = tp_node_info(n, NULL, 0);
    tp_plugin p = tp_create(&ks_plugin_node_ports, NULL, NULL);
    ks_cycle_state *cs = ks_cycle_state_new();
    ks_pre_filter_result *r = NULL;
    const ks_node_info *nis[1] = {ni};
    assert_string_equal(tp_status_str(p.ops->pre_filter(p.self, cs, pod, nis, 1, &r)), "Skip");
    ks_cycle_state_free(cs);
    tp_destroy(&p);
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(pod);
}

static void other_port_fits(void **st) {
    assert_string_equal(verdict(L("UDP/127.0.0.1/8080"), L("UDP/127.0.0.1/9090")), "Success");
}
static void same_udp_port_conflicts(void **st) {
    assert_string_equal(verdict(L("UDP/127.0.0.1/8080"), L("UDP/127.0.0.1/8080")), CONFLICT);
}
static void same_tcp_port_conflicts(void **st) {
    assert_string_equal(verdict(L("TCP/127.0.0.1/8080"), L("TCP/127.0.0.1/8080")), CONFLICT);
}
static void different_host_ip_fits(void **st) {
    assert_string_equal(verdict(L("TCP/127.0.0.1/8080"), L("TCP/127.0.0.2/8080")), "Success");
}
static void different_protocol_fits(void **st) {
    assert_string_equal(verdict(L("UDP/127.0.0.1/8080"), L("TCP/127.0.0.1/8080")), "Success");
}
static void second_udp_port_conflicts(void **st) {
    assert_string_equal(verdict(L("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), L("UDP/127.0.0.1/8080")),
                        CONFLICT);
}
static void first_tcp_port_conflicts(void **st) {
    assert_string_equal(verdict(L("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
                                L("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
                        CONFLICT);
}
static void wildcard_ip_wanted_conflicts_with_any_ip(void **st) {
    assert_string_equal(verdict(L("TCP/0.0.0.0/8001"), L("TCP/127.0.0.1/8001")), CONFLICT);
    assert_string_equal(verdict(L("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), L("TCP/127.0.0.1/8001")),
                        CONFLICT);
}
static void wildcard_ip_used_conflicts_with_any_ip(void **st) {
    assert_string_equal(verdict(L("TCP/127.0.0.1/8001"), L("TCP/0.0.0.0/8001")), CONFLICT);
}
static void wildcard_ip_other_protocol_fits(void **st) {
    assert_string_equal(verdict(L("UDP/127.0.0.1/8001"), L("TCP/0.0.0.0/8001")), "Success");
    assert_string_equal(verdict(L("UDP/127.0.0.1/8001"), L("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
                        CONFLICT);
}

static void non_sidecar_init_container_ports_are_ignored(void **st) {
    ks_pod *pod = tp_pod("p");
    ks_container *ic = tp_init_container(pod, TP_NONE, TP_NONE, false);
    tp_container_port(pod, ic, 8001, "TCP", NULL);
    tp_container(pod, TP_NONE, TP_NONE);
    tp_pod_done(pod);
    ks_pod *existing = pod_ports("existing", L("TCP/0.0.0.0/8001"));
    ks_node *n = tp_node("node");
    ks_node_info *ni = tp_node_info(n, &existing, 1);
    /* PreFilter skips: the Filter verdict is then Success. */
    assert_string_equal(tp_filter1(&ks_plugin_node_ports, pod, ni), "Success");
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(existing);
    ks_pod_unref(pod);
}

static void sidecar_init_container_ports_conflict(void **st) {
    ks_pod *pod = tp_pod("p");
    ks_container *ic = tp_init_container(pod, TP_NONE, TP_NONE, true);
    tp_container_port(pod, ic, 8001, "TCP", NULL);
    tp_container(pod, TP_NONE, TP_NONE);
    tp_pod_done(pod);
    ks_pod *existing = pod_ports("existing", L("TCP/0.0.0.0/8001"));
    ks_node *n = tp_node("node");
    ks_node_info *ni = tp_node_info(n, &existing, 1);
    assert_string_equal(tp_filter1(&ks_plugin_node_ports, pod, ni), CONFLICT);
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(existing);
    ks_pod_unref(pod);
}

static void filter_without_pre_filter_is_an_error(void **st) {
    ks_pod *pod = pod_ports("p", L("TCP/0.0.0.0/80"));
    ks_node *n = tp_node("node");
    ks_node_info *ni = tp_node_info(n, NULL, 0);
    tp_plugin p = tp_create(&ks_plugin_node_ports, NULL, NULL);
    ks_cycle_state *cs = ks_cycle_state_new();
    assert_string_equal(tp_status_str(p.ops->filter(p.self, cs, pod, ni)),
                        "Error: reading \"PreFilterNodePorts\" from cycleState: not found");
    ks_cycle_state_free(cs);
    tp_destroy(&p);
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(pod);
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prefilter_skips_pod_without_host_ports),
        cmocka_unit_test(other_port_fits),
        cmocka_unit_test(same_udp_port_conflicts),
        cmocka_unit_test(same_tcp_port_conflicts),
        cmocka_unit_test(different_host_ip_fits),
        cmocka_unit_test(different_protocol_fits),
        cmocka_unit_test(second_udp_port_conflicts),
        cmocka_unit_test(first_tcp_port_conflicts),
        cmocka_unit_test(wildcard_ip_wanted_conflicts_with_any_ip),
        cmocka_unit_test(wildcard_ip_used_conflicts_with_any_ip),
        cmocka_unit_test(wildcard_ip_other_protocol_fits),
        cmocka_unit_test(non_sidecar_init_container_ports_are_ignored),
        cmocka_unit_test(sidecar_init_container_ports_conflict),
        cmocka_unit_test(filter_without_pre_filter_is_an_error),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

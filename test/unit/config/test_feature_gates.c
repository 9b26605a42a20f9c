/* --feature-gates: the table of kube-scheduler v1.34.1's gates, the flag's
 * grammar and upstream's messages, AllAlpha/AllBeta, and ksched's refusal
 * of the gates it implements only at their default. */
#include "config/feature_gates.h"
#include "util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int setup(void **st) {
    (void)st;
    ks_feature_gates_reset();
    /* upstream's warnings go to the log: keep the test output quiet */
    ks_log_set_output(fopen("/dev/null", "w"));
    return 0;
}

static const ks_fg_spec *find(const char *name) {
    for (size_t i = 0; i < ks_fg_table_len; i++)
        if (!strcmp(ks_fg_table[i].name, name)) return &ks_fg_table[i];
    return NULL;
}

static void test_table(void **st) {
    (void)st;
    assert_true(ks_fg_table_len > 150);
    for (size_t i = 1; i < ks_fg_table_len; i++) assert_true(strcmp(ks_fg_table[i - 1].name, ks_fg_table[i].name) < 0);
    const ks_fg_spec *s = find("DynamicResourceAllocation");
    assert_non_null(s);
    assert_true(s->def);
    assert_int_equal(s->stage, KS_FG_GA);
    assert_false(s->locked);
    s = find("SchedulerQueueingHints");
    assert_non_null(s);
    assert_true(s->locked);
    s = find("DRADeviceTaints");
    assert_non_null(s);
    assert_false(s->def);
    assert_int_equal(s->stage, KS_FG_ALPHA);
    s = find("DRAPrioritizedList");
    assert_true(s->def);
    assert_int_equal(s->stage, KS_FG_BETA);
    assert_non_null(find("AllAlpha"));
    assert_non_null(find("AllBeta"));
    assert_non_null(find("ContextualLogging")); /* logsapi, registered by kube-scheduler's init */
    assert_non_null(find("WatchListClient"));   /* client-go's */
}

static bool apply1(const char *v, char **err) {
    const char *vals[] = {v};
    return ks_feature_gates_apply(vals, 1, err);
}

static void expect_error(const char *v, const char *want) {
    char *err = NULL;
    assert_false(apply1(v, &err));
    assert_non_null(err);
    assert_string_equal(err, want);
    free(err);
}

static void test_defaults(void **st) {
    (void)st;
    assert_true(ks_feature_enabled(KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION));
    assert_true(ks_feature_enabled(KS_FEAT_DRA_ADMIN_ACCESS));
    assert_true(ks_feature_enabled(KS_FEAT_DRA_PRIORITIZED_LIST));
    assert_true(ks_feature_enabled(KS_FEAT_DRA_DEVICE_STATUS));
    assert_true(ks_feature_enabled(KS_FEAT_DRA_FILTER_TIMEOUT));
    assert_false(ks_feature_enabled(KS_FEAT_DRA_DEVICE_TAINTS));
    assert_false(ks_feature_enabled(KS_FEAT_DRA_PARTITIONABLE_DEVICES));
    char *s = ks_feature_gates_string();
    assert_string_equal(s, "");
    free(s);
}

static void test_set(void **st) {
    (void)st;
    char *err = NULL;
    /* spaces around names and values, empty pairs, ParseBool's spellings,
     * the kube: prefix, the last value of a name wins */
    assert_true(apply1(" DRADeviceTaints = T ,, kube:DRAPartitionableDevices=1", &err) == false);
    free(err);
    err = NULL;
    assert_true(apply1(" DRADeviceTaints = T ,, DRAPartitionableDevices=1,DRAAdminAccess=true,DRAAdminAccess=False", &err));
    assert_null(err);
    assert_true(ks_feature_enabled(KS_FEAT_DRA_DEVICE_TAINTS));
    assert_true(ks_feature_enabled(KS_FEAT_DRA_PARTITIONABLE_DEVICES));
    assert_false(ks_feature_enabled(KS_FEAT_DRA_ADMIN_ACCESS));
    char *s = ks_feature_gates_string();
    assert_string_equal(s, "DRAAdminAccess=false,DRADeviceTaints=true,DRAPartitionableDevices=true");
    free(s);
    /* several flags join; a GA gate can be turned off (with a warning) */
    const char *vals[] = {"kube:DynamicResourceAllocation=false", "kube:DRADeviceTaints=true"};
    assert_true(ks_feature_gates_apply(vals, 2, &err));
    assert_false(ks_feature_enabled(KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION));
    /* each apply starts from the defaults */
    assert_true(ks_feature_enabled(KS_FEAT_DRA_ADMIN_ACCESS));
    assert_true(apply1("", &err));
    assert_true(ks_feature_enabled(KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION));
}

static void test_errors(void **st) {
    (void)st;
    expect_error("Foo=true", "unrecognized feature gate: Foo");
    expect_error("DRADeviceTaints", "missing bool value for DRADeviceTaints");
    expect_error("DRADeviceTaints=yes",
                 "invalid value of DRADeviceTaints=yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax");
    expect_error("SchedulerQueueingHints=false",
                 "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true");
    /* a locked gate at its value is fine */
    char *err = NULL;
    assert_true(apply1("SchedulerQueueingHints=true", &err));
    expect_error("SchedulerQueueingHints=false,SidecarContainers=false",
                 "[cannot set feature gate SchedulerQueueingHints to false, feature is locked to true, cannot set "
                 "feature gate SidecarContainers to false, feature is locked to true]");
    expect_error("DRADeviceTaints=true,kube:DRAAdminAccess=true",
                 "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use");
    expect_error("wardle:A=true", "component not registered: wardle");
    /* nothing changed by a failed apply */
    assert_true(apply1("DRADeviceTaints=true", &err));
    expect_error("DRAPartitionableDevices=true,Foo=true", "unrecognized feature gate: Foo");
    assert_true(ks_feature_enabled(KS_FEAT_DRA_DEVICE_TAINTS));
    assert_false(ks_feature_enabled(KS_FEAT_DRA_PARTITIONABLE_DEVICES));
}

static void test_not_implemented(void **st) {
    (void)st;
    expect_error("StorageCapacityScoring=true",
                 "feature gate StorageCapacityScoring=true is not supported by ksched: it implements only the "
                 "default, StorageCapacityScoring=false (docs/configuration.md)");
    expect_error("SchedulerPopFromBackoffQ=false",
                 "feature gate SchedulerPopFromBackoffQ=false is not supported by ksched: it implements only the "
                 "default, SchedulerPopFromBackoffQ=true (docs/configuration.md)");
    char *err = NULL;
    /* at its default it is accepted; a gate kube-scheduler never reads is
     * accepted at any value */
    assert_true(apply1("StorageCapacityScoring=false,SchedulerPopFromBackoffQ=true,EnvFiles=true,"
                       "ContextualLogging=false,WatchListClient=true",
                       &err));
    assert_null(err);
}

static void test_all_alpha_beta(void **st) {
    (void)st;
    /* AllAlpha turns on gates ksched does not implement: refused, naming
     * the first; turned off explicitly they are fine, whatever the order */
    expect_error("AllAlpha=true",
                 "feature gate ComponentFlagz=true (through AllAlpha) is not supported by ksched: it implements "
                 "only the default, ComponentFlagz=false (docs/configuration.md)");
    char *err = NULL;
    assert_true(apply1("ComponentFlagz=false,ComponentStatusz=false,DRAConsumableCapacity=false,"
                       "DRADeviceBindingConditions=false,DRAExtendedResource=false,AllAlpha=true,"
                       "NominatedNodeNameForExpectation=false,StorageCapacityScoring=false",
                       &err));
    if (err) fail_msg("%s", err);
    assert_true(ks_feature_enabled(KS_FEAT_DRA_DEVICE_TAINTS));
    assert_true(ks_feature_enabled(KS_FEAT_DRA_PARTITIONABLE_DEVICES));
    /* AllBeta=false turns off the beta DRA gates, and gates ksched keeps
     * at their default */
    expect_error("AllBeta=false",
                 "feature gate InPlacePodVerticalScaling=false (through AllBeta) is not supported by ksched: it "
                 "implements only the default, InPlacePodVerticalScaling=true (docs/configuration.md)");
}

static void test_known(void **st) {
    (void)st;
    char *k = ks_feature_gates_known();
    assert_non_null(strstr(k, "AllAlpha=true|false (ALPHA - default=false)\n"));
    assert_non_null(strstr(k, "DRADeviceTaints=true|false (ALPHA - default=false)\n"));
    assert_non_null(strstr(k, "DRAPrioritizedList=true|false (BETA - default=true)\n"));
    assert_null(strstr(k, "DynamicResourceAllocation=")); /* GA gates are not listed */
    free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_table, setup),
        cmocka_unit_test_setup(test_defaults, setup),
        cmocka_unit_test_setup(test_set, setup),
        cmocka_unit_test_setup(test_errors, setup),
        cmocka_unit_test_setup(test_not_implemented, setup),
        cmocka_unit_test_setup(test_all_alpha_beta, setup),
        cmocka_unit_test_setup(test_known, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

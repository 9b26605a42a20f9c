/* Loading plugin shared objects: the good path, every refusal and its
 * message, --plugin / --plugin-dir parsing. The .so files are built by the
 * Makefile from examples/plugins and test/fixtures/plugins. */
#include "cmd/plugin_opts.h"
#include "framework/framework_internal.h"
#include "framework/loader.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define PLUGINS KS_BUILD_DIR "/plugins/"
#define TEST_PLUGINS KS_BUILD_DIR "/test/plugins/"

static int setup(void **state) {
    *state = ks_registry_new();
    return 0;
}

static int teardown(void **state) {
    ks_registry_free(*state);
    return 0;
}

/* Load path and expect failure with exactly msg. */
static void expect_load_error(ks_registry *reg, const char *path, const char *msg) {
    char *err = NULL;
    assert_false(ks_plugin_load(reg, path, &err));
    assert_non_null(err);
    assert_string_equal(err, msg);
    free(err);
}

static void test_load_example(void **state) {
    ks_registry *reg = *state;
    char *err = NULL;
    assert_true(ks_plugin_load(reg, PLUGINS "AvoidNodePlugin.so", &err));
    assert_null(err);
    const ks_plugin_ops *ops = ks_registry_find(reg, "AvoidNodePlugin");
    assert_non_null(ops);
    assert_int_equal(ops->abi_version, KS_ABI_VERSION);
    assert_non_null(ops->filter);
    assert_null(ops->score);
    /* Filter only: that is what multiPoint expands it to. */
    assert_int_equal(ks_registry_points(reg, "AvoidNodePlugin"), KS_EP_BIT(KS_EP_FILTER));
}

static void test_two_plugins_one_file(void **state) {
    ks_registry *reg = *state;
    char *err = NULL;
    assert_true(ks_plugin_load(reg, TEST_PLUGINS "two_plugins.so", &err));
    assert_non_null(ks_registry_find(reg, "TwoA"));
    assert_non_null(ks_registry_find(reg, "TwoB"));
}

static void test_cxx_plugin(void **state) {
    ks_registry *reg = *state;
    char *err = NULL;
    assert_true(ks_plugin_load(reg, TEST_PLUGINS "cxx_plugin.so", &err));
    const ks_plugin_ops *ops = ks_registry_find(reg, "CxxZoneFilter");
    assert_non_null(ops);
    assert_non_null(ops->filter);
}

static void test_missing_file(void **state) {
    expect_load_error(*state, "no/such/plugin.so",
                      "no/such/plugin.so: cannot load plugin: No such file or directory");
}

static void test_not_a_shared_object(void **state) {
    char *err = NULL;
    /* A regular file that is not an ELF object: dlopen's own words. */
    assert_false(ks_plugin_load(*state, "test/fixtures/plugins/no_init.c", &err));
    assert_non_null(strstr(err, "test/fixtures/plugins/no_init.c: cannot load plugin: "));
    assert_non_null(strstr(err, "no_init.c: invalid ELF header"));
    free(err);
}

static void test_directory_is_not_a_plugin(void **state) {
    expect_load_error(*state, TEST_PLUGINS,
                      TEST_PLUGINS ": cannot load plugin: not a regular file");
}

static void test_undefined_symbol(void **state) {
    char *err = NULL;
    assert_false(ks_plugin_load(*state, TEST_PLUGINS "undefined_symbol.so", &err));
    assert_non_null(strstr(err, "undefined_symbol.so: cannot load plugin: "));
    assert_non_null(strstr(err, "undefined symbol: ks_function_from_the_future"));
    free(err);
}

static void test_missing_entry_symbol(void **state) {
    expect_load_error(*state, TEST_PLUGINS "no_init.so",
                      TEST_PLUGINS "no_init.so: not a ksched plugin: it does not export "
                                   "ks_plugin_init()");
}

static void test_abi_mismatch(void **state) {
    ks_registry *reg = *state;
    char msg[256];
    snprintf(msg, sizeof(msg),
             TEST_PLUGINS "bad_abi.so: plugin \"FutureFilter\" was built for ksched plugin ABI %u, "
                          "this ksched provides %u",
             KS_ABI_VERSION + 1, KS_ABI_VERSION);
    expect_load_error(reg, TEST_PLUGINS "bad_abi.so", msg);
    assert_null(ks_registry_find(reg, "FutureFilter"));
}

static void test_init_fails(void **state) {
    expect_load_error(*state, TEST_PLUGINS "init_fails.so",
                      TEST_PLUGINS "init_fails.so: ks_plugin_init() failed (returned 7)");
}

static void test_duplicate_name(void **state) {
    ks_registry *reg = *state;
    char *err = NULL;
    assert_true(ks_plugin_load(reg, PLUGINS "AvoidNodePlugin.so", &err));
    expect_load_error(reg, TEST_PLUGINS "dup_avoid.so",
                      TEST_PLUGINS "dup_avoid.so: plugin \"AvoidNodePlugin\" is already registered");
    /* The first one stays. */
    assert_non_null(ks_registry_find(reg, "AvoidNodePlugin")->filter);
}

static void test_duplicate_of_intree(void **state) {
    (void)state;
    expect_load_error(ks_default_registry(), TEST_PLUGINS "dup_intree.so",
                      TEST_PLUGINS "dup_intree.so: plugin \"NodeResourcesFit\" is already "
                                   "registered");
}

static void test_same_file_twice(void **state) {
    ks_registry *reg = *state;
    char *err = NULL;
    assert_true(ks_plugin_load(reg, PLUGINS "NodeTypeFilter.so", &err));
    /* The same file again (through another path): its names are taken. */
    expect_load_error(reg, KS_BUILD_DIR "/plugins/../plugins/NodeTypeFilter.so",
                      KS_BUILD_DIR "/plugins/../plugins/NodeTypeFilter.so: plugin "
                                   "\"NodeTypeFilter\" is already registered");
}

static void test_load_dir(void **state) {
    ks_registry *reg = *state;
    char *err = NULL;
    assert_true(ks_plugin_load_dir(reg, KS_BUILD_DIR "/plugins", &err));
    assert_null(err);
    const char *names[] = {"AvoidNodePlugin", "NodeTypeFilter", "PodDensityScore",
                           "GPUPriorityPlugin", "Coscheduling"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_non_null(ks_registry_find(reg, names[i]));
}

static void test_load_dir_missing(void **state) {
    char *err = NULL;
    assert_false(ks_plugin_load_dir(*state, "no/such/dir", &err));
    assert_string_equal(err, "no/such/dir: cannot read plugin directory: No such file or directory");
    free(err);
}

static void test_load_dir_stops_at_bad_plugin(void **state) {
    char *err = NULL;
    /* test/plugins holds bad_abi.so, which sorts first and fails. */
    assert_false(ks_plugin_load_dir(*state, KS_BUILD_DIR "/test/plugins", &err));
    assert_non_null(strstr(err, "bad_abi.so: plugin \"FutureFilter\" was built for"));
    free(err);
}

static void test_opts_parse(void **state) {
    (void)state;
    char *argv[] = {"ksched", "--plugin", "a.so", "--plugin=b.so", "-plugin-dir", "d",
                    "--plugin-dir=e", "--plugins", "x", "--plugin", NULL};
    int argc = 10;
    ks_plugin_opts o = {0};
    char *err = NULL;
    int i = 1;
    assert_int_equal(ks_plugin_opts_parse(&o, argc, argv, &i, &err), 1);
    assert_int_equal(i, 2);
    i = 3;
    assert_int_equal(ks_plugin_opts_parse(&o, argc, argv, &i, &err), 1);
    assert_int_equal(i, 3);
    i = 4;
    assert_int_equal(ks_plugin_opts_parse(&o, argc, argv, &i, &err), 1);
    assert_int_equal(i, 5);
    i = 6;
    assert_int_equal(ks_plugin_opts_parse(&o, argc, argv, &i, &err), 1);
    i = 7; /* --plugins is another option */
    assert_int_equal(ks_plugin_opts_parse(&o, argc, argv, &i, &err), 0);
    i = 8; /* a plain argument */
    assert_int_equal(ks_plugin_opts_parse(&o, argc, argv, &i, &err), 0);
    i = 9; /* no value */
    assert_int_equal(ks_plugin_opts_parse(&o, argc, argv, &i, &err), -1);
    assert_string_equal(err, "--plugin needs a value (a .so file)");
    free(err);

    assert_int_equal(o.n, 4);
    assert_false(o.v[0].is_dir);
    assert_string_equal(o.v[0].path, "a.so");
    assert_string_equal(o.v[1].path, "b.so");
    assert_true(o.v[2].is_dir);
    assert_string_equal(o.v[2].path, "d");
    assert_true(o.v[3].is_dir);
    assert_string_equal(o.v[3].path, "e");
    ks_plugin_opts_free(&o);
}

static void test_opts_load(void **state) {
    ks_registry *reg = *state;
    ks_plugin_opts o = {0};
    char *err = NULL;
    ks_plugin_opts_add(&o, false, PLUGINS "PodDensityScore.so");
    ks_plugin_opts_add(&o, false, TEST_PLUGINS "init_fails.so");
    assert_false(ks_plugin_opts_load(&o, reg, &err));
    assert_string_equal(err, TEST_PLUGINS "init_fails.so: ks_plugin_init() failed (returned 7)");
    free(err);
    assert_non_null(ks_registry_find(reg, "PodDensityScore"));
    ks_plugin_opts_free(&o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_load_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_plugins_one_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cxx_plugin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_shared_object, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_is_not_a_plugin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undefined_symbol, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_entry_symbol, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abi_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_of_intree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_file_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_dir_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_dir_stops_at_bad_plugin, setup, teardown),
        cmocka_unit_test(test_opts_parse),
        cmocka_unit_test_setup_teardown(test_opts_load, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* What the plugin loader takes from a plugin .so: its ks_plugin_ops
 * (ABI version, name, which extension points it implements, the events
 * it registers), and then a KubeSchedulerConfiguration naming it. The
 * input is
 *     byte 0      ABI version (0: KS_ABI_VERSION, else the byte itself)
 *     bytes 1-3   which extension-point functions are set (bits)
 *     byte 4      how many events events_to_register returns (it may
 *                 claim more than it was given room for)
 *     bytes 5..   the plugin name, up to a NUL (at most 256 bytes)
 *     the rest    a KubeSchedulerConfiguration
 * The plugin is registered next to the in-tree ones, the configuration
 * loaded and resolved against that registry, and each profile's
 * framework built and freed. */
#include "fuzz.h"

#include "config/config.h"
#include "framework/framework.h"
#include "util/log.h"

#include <ksched/framework.h>

static uint8_t nevents;
static ks_cluster_event events[300];

static size_t events_fn(void *self, ks_cluster_event *out, size_t max) {
    (void)self;
    for (size_t i = 0; i < nevents && i < max; i++) out[i] = events[i];
    return nevents; /* may exceed max: the framework must not trust it */
}
static ks_status *pre_enqueue(void *s, const ks_pod *p) { (void)s, (void)p; return NULL; }
static bool less(void *s, const ks_queued_pod *a, const ks_queued_pod *b) { (void)s, (void)a, (void)b; return false; }
static ks_status *filter(void *s, ks_cycle_state *st, const ks_pod *p, const ks_node_info *n) {
    (void)s, (void)st, (void)p, (void)n;
    return NULL;
}
static ks_status *score(void *s, ks_cycle_state *st, const ks_pod *p, const ks_node_info *n, int64_t *sc) {
    (void)s, (void)st, (void)p, (void)n;
    *sc = 0;
    return NULL;
}
static ks_status *reserve(void *s, ks_cycle_state *st, const ks_pod *p, const char *n) {
    (void)s, (void)st, (void)p, (void)n;
    return NULL;
}
static ks_status *bind(void *s, ks_cycle_state *st, const ks_pod *p, const char *n) {
    (void)s, (void)st, (void)p, (void)n;
    return NULL;
}
static void post_bind(void *s, ks_cycle_state *st, const ks_pod *p, const char *n) { (void)s, (void)st, (void)p, (void)n; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    if (size < 6) return 0;
    ks_plugin_ops ops;
    memset(&ops, 0, sizeof(ops));
    ops.abi_version = data[0] ? data[0] : KS_ABI_VERSION;
    uint32_t bits = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16;
    if (bits & 1) ops.pre_enqueue = pre_enqueue;
    if (bits & 2) ops.less = less;
    if (bits & 4) ops.filter = filter;
    if (bits & 8) ops.score = score;
    if (bits & 16) ops.reserve = reserve;
    if (bits & 32) ops.bind = bind;
    if (bits & 64) ops.post_bind = post_bind;
    if (bits & 128) ops.events_to_register = events_fn;
    nevents = data[4];
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        events[i] = (ks_cluster_event){(uint32_t)i * 2654435761u, bits ^ (uint32_t)i};
    size_t off = 5, end = off;
    while (end < size && end - off < 256 && data[end]) end++;
    char *name = fz_cstr(data + off, end - off);
    ops.name = name;
    off = end < size ? end + 1 : end;

    ks_registry *reg = ks_registry_new();
    ks_registry *def = ks_default_registry();
    for (uint32_t i = 0; i < def->n; i++) ks_registry_add(reg, def->ops[i], NULL);
    char *err = NULL;
    bool added = ks_registry_add(reg, &ops, &err);
    FZ_CHECK(added || err, "refused without a message");
    free(err);
    free(ks_registry_take_error(reg));

    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("fuzz.yaml", (const char *)data + off, size - off, &errs);
    if (cfg) {
        ks_config_errors_free(&errs);
        ks_config_errors_init(&errs);
        if (ks_config_resolve(cfg, ks_registry_points, reg, &errs)) {
            ks_framework_options fo = {.parallelism = 1};
            for (uint32_t i = 0; i < cfg->nprofiles; i++) {
                err = NULL;
                ks_framework *fw = ks_framework_new(reg, &cfg->profiles[i], &fo, &err);
                FZ_CHECK(fw || err, "framework refused without a message");
                if (fw) ks_framework_free(fw);
                free(err);
            }
        }
        ks_config_free(cfg);
    }
    ks_config_errors_free(&errs);
    ks_registry_free(reg);
    free(name);
    return 0;
}

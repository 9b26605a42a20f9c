/* KubeSchedulerConfiguration: load (parse, strict decode, defaults,
 * validation, resolution) from any bytes; a configuration that loads and
 * resolves (one the framework would run) is printed, and the print must
 * load again and print the same (what kube-scheduler --write-config-to
 * writes, it reads back). */
#include "fuzz.h"

#include "config/config.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("fuzz.yaml", (const char *)data, size, &errs);
    FZ_CHECK(cfg || errs.n > 0, "refused without a message");
    ks_config_errors_free(&errs);
    if (!cfg) return 0;
    /* Only a configuration kube-scheduler would run must print stably: the
     * merge of default and custom plugin lists is not idempotent over a
     * list that names a plugin twice, upstream's neither, and the
     * framework refuses such lists. */
    ks_config_errors_init(&errs);
    bool runs = ks_config_resolve(cfg, NULL, NULL, &errs);
    ks_config_errors_free(&errs);
    if (!runs) {
        free(ks_config_to_yaml(cfg));
        ks_config_free(cfg);
        return 0;
    }
    char *once = ks_config_to_yaml(cfg);
    ks_config_free(cfg);
    FZ_CHECK(once != NULL, "no print");
    ks_config_errors_init(&errs);
    cfg = ks_config_load_buffer("printed.yaml", once, strlen(once), &errs);
    FZ_CHECK(cfg != NULL, "the print does not load: %s\n%s", errs.n ? errs.msgs[0] : "", once);
    ks_config_errors_free(&errs);
    char *twice = ks_config_to_yaml(cfg);
    ks_config_free(cfg);
    FZ_CHECK(twice && strcmp(once, twice) == 0, "print differs after a reload:\n%s\n----\n%s", once,
             twice ? twice : "(null)");
    free(once);
    free(twice);
    return 0;
}

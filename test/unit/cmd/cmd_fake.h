/* What the command tests share: a kube-apiserver stand-in (apifake.h)
 * serving a one-node cluster with one pending pod (lists answered, watches
 * held a moment and ended, bindings, status patches and events taken), a
 * kubeconfig naming it, and a command run on a thread of its own until the
 * test sends SIGTERM (blocked in every thread from main on, so only the
 * command's own signal wait takes it). Included by one test file each. */
#ifndef KS_TEST_CMD_FAKE_H
#define KS_TEST_CMD_FAKE_H

#include "apifake.h"
#include "cmd/commands.h"
#include "util/log.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#define CF_NODE                                                                                                \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"5\","       \
    "\"labels\":{\"kubernetes.io/hostname\":\"n1\"}},\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":"   \
    "\"4Gi\",\"pods\":\"110\"},\"capacity\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"}}}"
#define CF_POD                                                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\","         \
    "\"uid\":\"uid-p\",\"resourceVersion\":\"7\"},\"spec\":{\"schedulerName\":\"default-scheduler\","          \
    "\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"     \
    "\"status\":{\"phase\":\"Pending\"}}"

static struct {
    char kubeconfig[64];
    bool refuse_lists; /* answer every list with 403 */
} CF;

static int cf_handler(const af_request *r, char **body) {
    if (!strcmp(r->method, "GET")) {
        if (r->watch) { /* the stream ends: watched again */
            *body = strdup("");
            return 200;
        }
        if (CF.refuse_lists) return 403;
        const char *items = !strcmp(r->path, "/api/v1/nodes") ? CF_NODE : !strcmp(r->path, "/api/v1/pods") ? CF_POD : "";
        size_t n = strlen(items) + 128;
        *body = malloc(n);
        snprintf(*body, n, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\"},"
                           "\"items\":[%s]}", items);
        return 200;
    }
    if (strstr(r->path, "/binding") || strstr(r->path, "/events")) {
        *body = strdup("{}");
        return 201;
    }
    if (!strcmp(r->method, "PATCH")) {
        *body = strdup(CF_POD);
        return 200;
    }
    return 404;
}

static bool cf_start(void) {
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    CF.refuse_lists = false;
    if (!af_start(cf_handler)) return false;
    af_lock();
    AF.watch_delay_ms = 200;
    af_unlock();
    snprintf(CF.kubeconfig, sizeof(CF.kubeconfig), "/tmp/ksched-cmd-kc-XXXXXX");
    int fd = mkstemp(CF.kubeconfig);
    if (fd < 0) return false;
    FILE *f = fdopen(fd, "w");
    fprintf(f,
            "apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:%u\n"
            "users:\n- name: u\n  user:\n    token: t\n"
            "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
            "current-context: x\n",
            AF.port);
    fclose(f);
    return true;
}

static void cf_stop(void) {
    af_stop();
    unlink(CF.kubeconfig);
}

/* SIGTERM and SIGINT blocked in this thread and every thread it starts
 * (call first in main, before any thread exists). */
static __attribute__((unused)) void cf_block_signals(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

typedef struct cf_cmd {
    int (*fn)(int argc, char **argv);
    int argc;
    char **argv;
    int rc;
    pthread_t t;
} cf_cmd;

static __attribute__((unused)) void *cf_cmd_main(void *arg) {
    cf_cmd *c = arg;
    c->rc = c->fn(c->argc, c->argv);
    return NULL;
}

static __attribute__((unused)) void cf_cmd_start(cf_cmd *c) { pthread_create(&c->t, NULL, cf_cmd_main, c); }

/* SIGTERM to the process (the command's signal wait takes it), then wait
 * for the command to return; its exit status. */
static __attribute__((unused)) int cf_cmd_stop(cf_cmd *c) {
    kill(getpid(), SIGTERM);
    pthread_join(c->t, NULL);
    return c->rc;
}

static __attribute__((unused)) bool cf_path_seen(void *arg) {
    const char *want = arg;
    for (int i = 0; i < AF.nlog; i++)
        if (strstr(AF.log[i].path, want)) return true;
    return false;
}

#endif

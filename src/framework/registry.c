#include "framework/framework_internal.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

ks_registry *ks_registry_new(void) { return ks_xcalloc(1, sizeof(ks_registry)); }

void ks_registry_free(ks_registry *reg) {
    if (!reg || reg == ks_default_registry()) return;
    free(reg->ops);
    free(reg->own);
    free(reg->error);
    free(reg);
}

char *ks_registry_take_error(ks_registry *reg) {
    char *e = reg->error;
    reg->error = NULL;
    return e;
}

/* Refuse: the message goes to the caller and is kept for the loader. */
static bool refuse(ks_registry *reg, char **err, char *msg) {
    if (!reg->error) reg->error = ks_xstrdup(msg);
    if (err) *err = msg;
    else free(msg);
    return false;
}

const ks_plugin_ops *ks_registry_find(const ks_registry *reg, const char *name) {
    for (uint32_t i = 0; reg && i < reg->n; i++)
        if (strcmp(reg->ops[i]->name, name) == 0) return reg->ops[i];
    return NULL;
}

bool ks_registry_add(ks_registry *reg, const ks_plugin_ops *ops, char **err) {
    /* abi_version first: a plugin of another ABI may not even have a name
     * where we look for one. */
    if (ops && ops->abi_version != KS_ABI_VERSION) {
        /* Its struct layout may differ from ours, so none of its pointers
         * can be trusted; the name is read only to say who was refused. */
        return refuse(reg, err,
                      ks_xasprintf("plugin \"%s\" was built for ksched plugin ABI %u, this ksched "
                                   "provides %u",
                                   ops->name ? ops->name : "", ops->abi_version, KS_ABI_VERSION));
    }
    if (!ops || !ops->name || !*ops->name) return refuse(reg, err, ks_xstrdup("plugin has no name"));
    if (ks_registry_find(reg, ops->name))
        return refuse(reg, err, ks_xasprintf("plugin \"%s\" is already registered", ops->name));
    KS_GROW(reg->ops, reg->cap, reg->n + 1);
    reg->ops[reg->n++] = ops;
    return true;
}

bool ks_registry_add_own(ks_registry *reg, const ks_plugin_ops *ops, char **err) {
    if (!ks_registry_add(reg, ops, err)) return false;
    KS_GROW(reg->own, reg->cap_own, reg->nown + 1);
    reg->own[reg->nown++] = ops;
    return true;
}

bool ks_registry_is_own(const ks_registry *reg, const ks_plugin_ops *ops) {
    for (uint32_t i = 0; reg && i < reg->nown; i++)
        if (reg->own[i] == ops) return true;
    return false;
}

static ks_registry default_registry;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_init(void) {
    for (size_t i = 0; i < ks_intree_plugins_count; i++) {
        char *err = NULL;
        if (!ks_registry_add_own(&default_registry, ks_intree_plugins[i], &err)) free(err);
    }
}

ks_registry *ks_default_registry(void) {
    pthread_once(&default_once, default_init);
    return &default_registry;
}

uint32_t ks_plugin_ops_points(const ks_plugin_ops *o) {
    uint32_t m = 0;
    if (o->pre_enqueue) m |= KS_EP_BIT(KS_EP_PRE_ENQUEUE);
    if (o->less) m |= KS_EP_BIT(KS_EP_QUEUE_SORT);
    if (o->pre_filter) m |= KS_EP_BIT(KS_EP_PRE_FILTER);
    if (o->filter) m |= KS_EP_BIT(KS_EP_FILTER);
    if (o->post_filter) m |= KS_EP_BIT(KS_EP_POST_FILTER);
    if (o->pre_score) m |= KS_EP_BIT(KS_EP_PRE_SCORE);
    if (o->score) m |= KS_EP_BIT(KS_EP_SCORE);
    if (o->reserve || o->unreserve) m |= KS_EP_BIT(KS_EP_RESERVE);
    if (o->permit) m |= KS_EP_BIT(KS_EP_PERMIT);
    if (o->pre_bind || o->pre_bind_pre_flight) m |= KS_EP_BIT(KS_EP_PRE_BIND);
    if (o->bind) m |= KS_EP_BIT(KS_EP_BIND);
    if (o->post_bind) m |= KS_EP_BIT(KS_EP_POST_BIND);
    return m;
}

uint32_t ks_registry_points(void *reg, const char *name) {
    const ks_plugin_ops *o = ks_registry_find(reg ? reg : ks_default_registry(), name);
    if (!o) return 0;
    uint32_t m = ks_plugin_ops_points(o);
    /* A plugin that implements nothing still exists. */
    return m ? m : 0x80000000u;
}

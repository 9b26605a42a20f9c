/* Status internals: a code, the reasons, and the plugin that produced it.
 * NULL is Success everywhere. */
#ifndef KS_STATUS_H
#define KS_STATUS_H

#include <ksched/ksched.h>

/* A status with one reason is one allocation: the reason's text follows
 * the struct and reasons points at first; more reasons are malloc'd. */
struct ks_status {
    ks_code code;
    uint32_t nreasons, cap;
    char **reasons;
    const char *plugin; /* static (the plugin's registered name) */
    bool first_static;  /* reasons[0] is a constant string, not owned */
    bool spare_block;   /* a block of the spare size (status.c): may be reused */
    char *first[1];
};

/* A status whose one reason is a string constant (a literal: it must
 * outlive the status), kept by pointer: the per-node Filter rejections,
 * made for every node a plugin turns down, cost no copy. */
ks_status *ks_status_new_const(ks_code code, const char *reason);

/* Copy of s (NULL stays NULL). */
ks_status *ks_status_clone(const ks_status *s);
void ks_status_set_plugin(ks_status *s, const char *plugin);
/* All reasons joined with ", " (upstream Status.Message()); malloc'd. */
char *ks_status_message(const ks_status *s);
bool ks_code_is_rejected(ks_code c); /* Unschedulable, UnschedulableAndUnresolvable, Pending */
/* Log "<what>: <message>" at error level and free s (no-op for NULL).
 * For the scheduler's own bookkeeping failures, which upstream logs and
 * moves on from. */
void ks_status_log_free(const char *what, ks_status *s);

#endif

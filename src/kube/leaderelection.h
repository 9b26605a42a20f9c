/* Leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * tools/leaderelection with the LeaseLock runs it for kube-scheduler
 * (ReleaseOnCancel set, a 20 s healthz watchdog, a LeaderElection event).
 *
 * One thread per elector. It tries to acquire the lease every retry
 * period (jittered by 1.2); once it holds it, calls on_started_leading and
 * renews every retry period; when a renewal has not succeeded for the
 * renew deadline it gives up. Either way, when it stops it releases the
 * lease if it still holds it (holder emptied, leaseDurationSeconds 1),
 * records "stopped leading" and calls on_stopped_leading.
 *
 * Updates are optimistic: the Lease is PUT with the resourceVersion last
 * seen; a conflict (409) or any failure falls back to a fresh GET. Expiry
 * is judged on the local monotonic clock from the moment the record was
 * last seen to change, never from the times written in the Lease.
 *
 * The elector talks to the API server through a client of its own (its
 * own rate budget, so that a flood of scheduler writes cannot starve the
 * lease); make it with ks_leader_election_client_timeout_ms as its
 * per-request timeout, as client-go's NewFromKubeconfig does. */
#ifndef KS_LEADERELECTION_H
#define KS_LEADERELECTION_H

#include "config/config.h"
#include "kube/client.h"
#include "kube/event_recorder.h"

#include <stdbool.h>
#include <stdint.h>

/* Upstream's HealthzAdaptor timeout in kube-scheduler. */
#define KS_LEADER_HEALTHZ_TIMEOUT_NS (20LL * 1000000000LL)

typedef struct ks_leader_elector ks_leader_elector;

typedef struct ks_leader_callbacks {
    void *arg;
    /* Called on the elector's thread once the lease is held; must return
     * promptly (renewals wait for it). */
    void (*on_started_leading)(void *arg);
    /* Called once when the elector's thread ends, whether or not it led:
     * lost is true when a renewal failed (upstream then exits 1), false
     * when ks_leader_elector_stop asked it to end (the lease has been
     * released by then). On the elector's thread. */
    void (*on_stopped_leading)(void *arg, bool lost);
    /* Optional: a new holder was observed (first one included). */
    void (*on_new_leader)(void *arg, const char *identity);
} ks_leader_callbacks;

typedef struct ks_leader_elector_options {
    ks_kube_client *client;  /* not owned; outlives the elector */
    const char *lease_namespace, *lease_name;
    const char *identity;    /* NULL: ks_leader_identity_new() */
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
    bool release_on_cancel;  /* kube-scheduler: true */
    /* For the healthz message and metrics ("kube-scheduler" in upstream). */
    const char *name;        /* NULL: "kube-scheduler" */
    /* Optional: the LeaderElection events ("<identity> became leader",
     * "<identity> stopped leading") go here as core/v1 Events with source
     * component event_component (the first profile's schedulerName). */
    ks_event_recorder *events;
    const char *event_component;
    ks_leader_callbacks cb;
} ks_leader_elector_options;

/* "<hostname>_<uuid v4>" (malloc'd), or NULL with *err. */
char *ks_leader_identity_new(char **err);

/* Checks the durations as upstream's NewLeaderElector does ("leaseDuration
 * must be greater than renewDeadline", ...). Copies what it needs. */
ks_leader_elector *ks_leader_elector_new(const ks_leader_elector_options *o, char **err);
/* Starts the elector's thread (once). */
bool ks_leader_elector_start(ks_leader_elector *le, char **err);
/* Ends the thread as a cancelled context does upstream: a request in
 * flight is abandoned, the lease released (release_on_cancel), "stopped
 * leading" recorded, on_stopped_leading(lost=false) called unless the
 * thread had already ended. Waits for the thread. Bounded: the release
 * takes at most the renew deadline. Idempotent. */
void ks_leader_elector_stop(ks_leader_elector *le);
/* Stops if needed, then frees. */
void ks_leader_elector_free(ks_leader_elector *le);

const char *ks_leader_elector_identity(const ks_leader_elector *le);
/* The last observed holder is this elector. */
bool ks_leader_elector_is_leader(ks_leader_elector *le);
/* The last observed holder ("" when none), malloc'd. */
char *ks_leader_elector_leader(ks_leader_elector *le);

/* The /healthz and /readyz "leaderElection" check (upstream's
 * HealthzAdaptor): healthy unless this elector believes it leads and its
 * last successful renewal is older than the lease duration plus timeout
 * (a stuck renewal loop). le NULL (no election) is healthy. On failure
 * *err is "failed election to renew leadership on lease <name>". */
bool ks_leader_elector_healthy(ks_leader_elector *le, int64_t timeout_ns, char **err);

/* leader_election_master_status and leader_election_slowpath_total. */
typedef struct ks_leader_elector_stats {
    bool leading;
    uint64_t slowpath;
    uint64_t transitions_observed; /* holders observed to change */
} ks_leader_elector_stats;
void ks_leader_elector_stats_get(ks_leader_elector *le, ks_leader_elector_stats *out);

/* Per-request timeout for the elector's client: renewDeadline/2, at least
 * one second (client-go's NewFromKubeconfig). */
int64_t ks_leader_election_client_timeout_ms(const ks_leader_election *cfg);

/* ---- command-line flags --------------------------------------------------
 * kube-scheduler's leader election flags: --leader-elect[=BOOL],
 * --leader-elect-lease-duration, --leader-elect-renew-deadline,
 * --leader-elect-retry-period (Go durations), --leader-elect-resource-lock,
 * --leader-elect-resource-name, --leader-elect-resource-namespace. Values
 * given as "--flag=V" or "--flag V" (bools only with "="), one dash
 * accepted too. They override the configuration file, as upstream's
 * ApplyLeaderElectionTo does, with or without --config. */
typedef struct ks_leader_election_flags {
    bool has_leader_elect, leader_elect;
    bool has_lease_duration, has_renew_deadline, has_retry_period;
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
    const char *resource_lock, *resource_name, *resource_namespace; /* NULL: not given */
} ks_leader_election_flags;

/* 1 when argv[*i] is one of the flags (consumed; *i on the last argument
 * used), 0 when it is not, -1 with *err (malloc'd) on a bad or missing
 * value. Values are kept as pointers into argv. */
int ks_leader_election_flag_parse(ks_leader_election_flags *f, int argc, char **argv, int *i, char **err);
/* Apply the given flags over cfg, then check the result as upstream's
 * validation does (in its wording, "leaderElection.leaseDuration: Invalid
 * value: ..."); false with *err (one problem per line) when invalid. */
bool ks_leader_election_flags_apply(const ks_leader_election_flags *f, ks_leader_election *cfg,
                                    char **err);

#endif

/* ksched's version, and the kube-scheduler release whose decisions it
 * reproduces: one place for --version, the User-Agent and the logs. */
#ifndef KS_VERSION_H
#define KS_VERSION_H

#define KS_VERSION "0.1.0"
#define KS_COMPAT "v1.34"
/* the exact release (the Go module the differential tests run) */
#define KS_REFERENCE "v1.34.1"

#endif

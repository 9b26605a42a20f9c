/* /debug/pprof/ on the secure port, as kube-scheduler serves Go's
 * net/http/pprof when enableProfiling is on (the default):
 *
 *   /debug/pprof/                      an HTML index of what is served
 *   /debug/pprof/profile?seconds=N     a CPU profile of the process for N
 *                                      seconds (default 30), gzipped
 *                                      profile.proto (util/cpuprof.h):
 *                                      `go tool pprof https://HOST:10259/debug/pprof/profile`
 *   /debug/pprof/cmdline               the command line, NUL-separated
 *
 * Go's other profiles (heap, goroutine, block, mutex, ...) describe the
 * Go runtime and have no counterpart here: 404 "Unknown profile", as Go
 * answers a name it does not know. Authorized like every path not in
 * --authorization-always-allow-paths (delegated, not anonymous). */
#ifndef KS_PPROF_H
#define KS_PPROF_H

#include "util/strbuf.h"

/* A ks_route_fn for the prefix "/debug/pprof/". */
int ks_pprof_route(void *arg, const char *method, const char *path, const char *query, ks_strbuf *body,
                   const char **content_type);

#endif

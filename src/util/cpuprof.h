/* A CPU profile of the whole process in pprof's own format (a gzipped
 * perftools.profiles.Profile, as Go's runtime/pprof writes it), so that
 * `go tool pprof` reads ksched's profiles as it reads kube-scheduler's.
 *
 * Sampling: setitimer(ITIMER_PROF) at 100 Hz sends SIGPROF for every
 * 10 ms of CPU the process uses, to the thread that used it; the handler
 * records that thread's stack (glibc backtrace, whose unwinder steps over
 * the signal frame) and thread id into a preallocated buffer, without
 * locks or allocation. Samples past the buffer are counted and dropped.
 *
 * Symbols: each address is resolved when the profile is written, from
 * the ELF symbol table of the file mapped there (.symtab when the file
 * has one, as ksched's own binary does; else .dynsym), so static
 * functions are named too. Each sample carries a "thread" label with the
 * thread's name (/proc/self/task/TID/comm), which pprof's -tagfocus and
 * -tags select on.
 *
 * One profile at a time per process. */
#ifndef KS_CPUPROF_H
#define KS_CPUPROF_H

#include <stdbool.h>
#include <stddef.h>

/* Profile the process for `seconds` (1..3600), blocking the caller, then
 * write the gzipped profile into *out (malloc'd, *len bytes). false with
 * *err (malloc'd) when a profile is already running or it cannot start. */
bool ks_cpuprof_collect(int seconds, char **out, size_t *len, char **err);

/* Whether a profile is running now. */
bool ks_cpuprof_busy(void);

#endif

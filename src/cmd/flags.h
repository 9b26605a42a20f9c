/* The command line of every ksched command, parsed one way: a command
 * describes its flags (a table) and the flag groups it shares with other
 * commands (--config/-o/--plugin/--feature-gates, the live-cluster
 * what-ifs, kube-scheduler's run flags, serving, leader election), then
 * calls ks_cmd_line_parse once. Flags are written as upstream's pflag
 * takes them: "--name V", "--name=V", one dash too; bools as "--name" or
 * "--name=BOOL". -h/--help prints the command's usage.
 *
 * Adding a command: src/cmd/<name>_cmd.c with
 * `int cmd_<name>(int argc, char **argv)`, one line in ks_commands[]
 * (src/cmd/cli.c), and its flags as a ks_flag table; see simulate_cmd.c. */
#ifndef KS_CMD_FLAGS_H
#define KS_CMD_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ks_flag_type {
    KS_FLAG_BOOL,   /* bool * */
    KS_FLAG_STRING, /* const char ** (points into argv) */
    KS_FLAG_U64,    /* uint64_t *, at most max when max > 0 */
    KS_FLAG_FN,     /* fn(dst, value): false = invalid value */
} ks_flag_type;

typedef struct ks_flag {
    const char *name; /* without dashes: "seed", "o" */
    ks_flag_type type;
    void *dst;
    uint64_t max;
    bool (*fn)(void *dst, const char *val);
} ks_flag;

/* A group parser: 1 when argv[*i] was one of its flags (consumed; *i on
 * the last argument used), 0 when not, -1 with *err (malloc'd). */
typedef int (*ks_flag_group_fn)(void *ctx, int argc, char **argv, int *i, char **err);

typedef struct ks_flag_group {
    ks_flag_group_fn parse;
    void *ctx;
} ks_flag_group;

struct ks_cli_common;
struct ks_cli_live;
struct ks_run_flags;
struct ks_ops_flags;
struct ks_leader_election_flags;
struct ks_plugin_opts;
ks_flag_group ks_flags_common(struct ks_cli_common *c);
ks_flag_group ks_flags_live(struct ks_cli_live *l);
ks_flag_group ks_flags_run(struct ks_run_flags *f);
ks_flag_group ks_flags_ops(struct ks_ops_flags *f);
ks_flag_group ks_flags_leader_election(struct ks_leader_election_flags *f);
ks_flag_group ks_flags_plugins(struct ks_plugin_opts *o);

typedef struct ks_cmd_line {
    const char *cmd; /* messages start "ksched <cmd>: " */
    void (*usage)(FILE *f, const void *arg);
    const void *usage_arg;
    const ks_flag *flags;
    size_t nflags;
    const ks_flag_group *groups;
    size_t ngroups;
    /* Positional arguments go to args (argc entries); NULL: refused. */
    const char **args;
    size_t *nargs;
} ks_cmd_line;

/* pflag's boolean spellings (strconv.ParseBool): 1 t T true TRUE True,
 * 0 f F false FALSE False. */
bool ks_flag_parse_bool(const char *v, bool *out);

/* Parse argv[1..argc-1]. Returns -1 when the command goes on, else its
 * exit status: 0 after -h (usage on stdout, chosen after every flag is
 * read), 2 after a bad command line (the message on stderr; with the
 * usage for an unknown option). */
int ks_cmd_line_parse(const ks_cmd_line *cl, int argc, char **argv);

/* Table entries. */
#define KS_BOOL_FLAG(name, dst) {(name), KS_FLAG_BOOL, (dst), 0, NULL}
#define KS_STRING_FLAG(name, dst) {(name), KS_FLAG_STRING, (dst), 0, NULL}
#define KS_U64_FLAG(name, dst, max) {(name), KS_FLAG_U64, (dst), (max), NULL}
#define KS_FN_FLAG(name, dst, fn) {(name), KS_FLAG_FN, (dst), 0, (fn)}

#define KS_FLAGS_N(a) (sizeof(a) / sizeof((a)[0]))

#endif

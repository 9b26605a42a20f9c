/* The ksched subcommands. Each lives in its own file src/cmd/<name>_cmd.c
 * as `int cmd_<name>(int argc, char **argv)` (argv[0] is the command name;
 * returns the exit status), parses its flags with ks_cmd_line_parse
 * (flags.h) and gets one line in ks_commands[] (cli.c). */
#ifndef KS_COMMANDS_H
#define KS_COMMANDS_H

#include <stddef.h>

typedef int (*ks_cmd_fn)(int argc, char **argv);

typedef struct ks_command {
    const char *name;
    ks_cmd_fn fn;
    const char *summary; /* one line for `ksched help` */
} ks_command;

/* Exit statuses shared by the commands. */
enum { KS_EXIT_OK = 0, KS_EXIT_FAIL = 1, KS_EXIT_BAD_INPUT = 2 };

int cmd_version(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_check_config(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_why(int argc, char **argv);

/* Every command, in `ksched help` order (defined in cli.c). */
extern const ks_command ks_commands[];
extern const size_t ks_ncommands;

#endif

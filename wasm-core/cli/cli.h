/*
 * cli.h - what a `slablab` subcommand needs.  Each subcommand lives in its
 * own cli/cmd_<name>.c and registers itself with SL_CLI_COMMAND, so adding
 * one touches no shared table.
 *
 * Conventions every subcommand keeps: `--help` prints its usage to stdout and
 * returns 0; a bad argument prints "slablab NAME: <what is wrong>" and the
 * usage to stderr and returns SL_CLI_USAGE (exit status 2); other failures
 * return 1.  `--format table|csv|json` where the command prints results.
 */
#ifndef SL_CLI_H
#define SL_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define SL_CLI_USAGE 2

typedef struct sl_cli_command {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} sl_cli_command;

void sl_cli_register(const sl_cli_command *cmd);

#define SL_CLI_COMMAND(ident, ...)                                                                                     \
    static const sl_cli_command sl_cli_cmd_##ident = {__VA_ARGS__};                                                    \
    __attribute__((constructor)) static void sl_cli_register_##ident(void) { sl_cli_register(&sl_cli_cmd_##ident); }

/* Prints "slablab NAME: message" and the usage to stderr; returns SL_CLI_USAGE. */
int sl_cli_usage_error(const sl_cli_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* SL_FMT_TIME_BENCH (the experiments' prototype-kernel lines) is parsed by bench_options.c only. */
typedef enum sl_cli_format { SL_FMT_TABLE, SL_FMT_CSV, SL_FMT_JSON, SL_FMT_TIME_BENCH } sl_cli_format;
/* Parses "table", "csv" or "json"; returns false for anything else. */
bool sl_cli_parse_format(const char *s, sl_cli_format *out);
/* Parses a whole non-negative decimal number within [min, max]. */
bool sl_cli_parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out);
/* Writes s as a JSON string literal (quotes and escapes included). */
void sl_cli_json_string(FILE *f, const char *s);

#endif

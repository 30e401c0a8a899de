/* main.c - the `slablab` command: dispatches to the registered subcommands. */
#include "cli.h"

#include "../src/replay/replay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SL_CLI_MAX_COMMANDS 32

static const sl_cli_command *commands[SL_CLI_MAX_COMMANDS];
static unsigned ncommands;

void sl_cli_register(const sl_cli_command *cmd)
{
    if (ncommands < SL_CLI_MAX_COMMANDS)
        commands[ncommands++] = cmd;
}

int sl_cli_usage_error(const sl_cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "slablab %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s\n", cmd->usage);
    return SL_CLI_USAGE;
}

bool sl_cli_parse_format(const char *s, sl_cli_format *out)
{
    if (!s)
        return false;
    if (!strcmp(s, "table"))
        *out = SL_FMT_TABLE;
    else if (!strcmp(s, "csv"))
        *out = SL_FMT_CSV;
    else if (!strcmp(s, "json"))
        *out = SL_FMT_JSON;
    else
        return false;
    return true;
}

bool sl_cli_parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

void sl_cli_json_string(FILE *f, const char *s)
{
    /* The core's writer: escapes, and replaces bytes that are not UTF-8 (a name from a hostile sysfs tree). */
    sl_strbuf b = {0};
    if (sl_strbuf_json_string(&b, s, strlen(s)) && !b.failed)
        fputs(b.data, f);
    else
        fputs("\"\"", f);
    sl_strbuf_free(&b);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const sl_cli_command *const *)a)->name, (*(const sl_cli_command *const *)b)->name);
}

static void print_help(FILE *f)
{
    fprintf(f, "usage: slablab COMMAND [ARGS]   (slablab COMMAND --help for a command's options)\n\ncommands:\n");
    for (unsigned i = 0; i < ncommands; i++)
        fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
}

int main(int argc, char **argv)
{
    qsort(commands, ncommands, sizeof commands[0], by_name);
    if (argc < 2) {
        print_help(stderr);
        return SL_CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        print_help(stdout);
        return 0;
    }
    for (unsigned i = 0; i < ncommands; i++) {
        if (!strcmp(argv[1], commands[i]->name)) {
            /* Only the arguments before "--" are the tool's: `capture -- ls -h /` passes -h to ls. */
            for (int a = 2; a < argc && strcmp(argv[a], "--"); a++) {
                if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                    printf("usage: %s\n", commands[i]->usage);
                    return 0;
                }
            }
            return commands[i]->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "slablab: unknown command '%s'\n", argv[1]);
    print_help(stderr);
    return SL_CLI_USAGE;
}

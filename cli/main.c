/*
 * main.c — the adaptmon command line: `adaptmon score …` (offline scoring),
 * `adaptmon replay …` (a file into a running server), `adaptmon version`,
 * `adaptmon help`. Each command lives in its own file
 * (cli_score.c, …); main only dispatches.
 */
#include "cli.h"
#include "config.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fputs("usage: adaptmon COMMAND [OPTIONS]\n"
          "\n"
          "commands:\n"
          "  serve           run the HTTP service (adaptmon serve --help)\n"
          "  config-example  print a commented example config file\n"
          "  backup          copy the database while the server runs (adaptmon backup --help)\n"
          "  restore         put a verified backup in place of a stopped server's database\n"
          "                  (adaptmon restore --help)\n"
          "  migrate         copy SQLite databases into PostgreSQL (adaptmon migrate --help)\n"
          "  score           score files offline (adaptmon score --help)\n"
          "  replay          post an XLIFF/TSV/JSONL file to a running server, resumable\n"
          "                  (adaptmon replay --help)\n"
          "  version         print the version and the metric signature version\n"
          "  help            this text\n",
          out);
}

int main(int argc, char **argv, char **envp)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "score"))
        return am_cli_score(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve") || !strcmp(cmd, "config-example"))
        return am_cli_serve(argc - 1, argv + 1, envp);
    if (!strcmp(cmd, "replay"))
        return am_cli_replay(argc - 1, argv + 1);
    if (!strcmp(cmd, "backup"))
        return am_cli_backup(argc - 1, argv + 1, envp);
    if (!strcmp(cmd, "restore"))
        return am_cli_restore(argc - 1, argv + 1, envp);
    if (!strcmp(cmd, "migrate"))
        return am_cli_migrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("adaptmon %s (signature adaptmon:%d)\n", AM_VERSION, AM_SIGNATURE_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "adaptmon: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}

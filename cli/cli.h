/* cli.h — entry points of the adaptmon commands (one file per command). */
#ifndef AM_CLI_H
#define AM_CLI_H

#include <stdio.h>

#define AM_VERSION "0.1.0"

/* `adaptmon score`: argv[0] is "score". Returns the process exit status
 * (0 ok, 1 bad input, 2 usage error). */
int am_cli_score(int argc, char **argv);
/* `adaptmon score` printing its result on out and its messages on err
 * instead of stdout and stderr (borrowed: the caller's streams, flushed,
 * never closed). Reentrant: threads may run it at once (python/_core.c
 * does). am_cli_score is am_cli_score_io(argc, argv, stdout, stderr). */
int am_cli_score_io(int argc, char **argv, FILE *out, FILE *err);
/* `adaptmon serve` (argv[0] "serve") and `adaptmon config-example` (argv[0]
 * "config-example"), cli_serve.c. Returns the exit status (2: usage). */
int am_cli_serve(int argc, char **argv, char **envp);
/* `adaptmon backup` (argv[0] "backup"), cli_backup.c: an online copy of the
 * database. Returns the exit status (0 ok, 1 failure, 2 usage). */
int am_cli_backup(int argc, char **argv, char **envp);
/* `adaptmon restore` (argv[0] "restore"), cli_restore.c: a verified backup
 * in place of a stopped server's database, its old WAL moved aside.
 * Returns the exit status (0 ok, 1 failure, 2 usage or refused). */
int am_cli_restore(int argc, char **argv, char **envp);

/* `adaptmon replay` (argv[0] "replay"), cli_replay.c: posts an XLIFF, TSV
 * or JSONL file's segments to a running server, resuming by segment id.
 * Returns the exit status (0 done, 1 failure, 2 usage). */
int am_cli_replay(int argc, char **argv);

/* `adaptmon migrate` (argv[0] "migrate"), cli_migrate.c: SQLite databases
 * copied into PostgreSQL in one checked transaction. Returns the exit
 * status (0 done, 1 failure, 2 usage or refused). */
int am_cli_migrate(int argc, char **argv);

#endif

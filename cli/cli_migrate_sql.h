/*
 * cli_migrate_sql.h — the SQL of `adaptmon migrate` (cli_migrate*.c), in one
 * place: the reads of the SQLite files (AM_MGL_*) and the statements on the
 * PostgreSQL target (AM_MGP_*). Table and column names are spliced in with
 * printf where the statement is generic over the tables (%s: names read
 * from the source's own sqlite_master and checked against the target's
 * catalog, never user input); values are always bound.
 *
 * Hidden rows: a session or background vocabulary whose name starts with
 * '~' is a deletion or a rewrite in progress, which the server purges at
 * its next start (store/sessions.c, store/vocab.c); migrate leaves them
 * and their rows behind.
 */
#ifndef AM_CLI_MIGRATE_SQL_H
#define AM_CLI_MIGRATE_SQL_H

/* ---- SQLite (the sources, read-only) --------------------------------------- */

#define AM_MGL_BEGIN "BEGIN"
#define AM_MGL_VERSION "SELECT coalesce(max(version), 0) FROM schema_migrations"
#define AM_MGL_HAS_MIGRATIONS                                                                      \
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
#define AM_MGL_TABLES                                                                              \
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "          \
    "ESCAPE '\\' AND name <> 'schema_migrations' ORDER BY name"
#define AM_MGL_COLUMNS "SELECT name FROM pragma_table_info(?1) ORDER BY cid"
#define AM_MGL_SESSION_IDS "SELECT id FROM sessions WHERE substr(id, 1, 1) <> '~'"
#define AM_MGL_VOCABS                                                                              \
    "SELECT vid, name, words, tokenizer, lang, source_lang FROM vocabularies "                     \
    "WHERE substr(name, 1, 1) <> '~' ORDER BY vid"
#define AM_MGL_VOCAB_WORDS "SELECT word, count FROM vocabulary_words WHERE vid = ?1 ORDER BY word"
#define AM_MGL_COUNTERS "SELECT name, value FROM counters ORDER BY name"
#define AM_MGL_MAX_SID "SELECT coalesce(max(sid), 0) FROM sessions WHERE substr(id, 1, 1) <> '~'"
#define AM_MGL_MAX_VID                                                                             \
    "SELECT coalesce(max(vid), 0) FROM vocabularies WHERE substr(name, 1, 1) <> '~'"
/* The per-session state the target must hold the same (cli_migrate_check.c). */
#define AM_MG_STATE_COLS                                                                           \
    "sid, id, version, incarnation, segments, removed, glossary_version, result_gen, settled"
#define AM_MGL_STATES                                                                              \
    "SELECT " AM_MG_STATE_COLS " FROM sessions WHERE substr(id, 1, 1) <> '~' ORDER BY sid"

/* %s table, %s its filter (below). */
#define AM_MGL_COUNT_FMT "SELECT count(*) FROM \"%s\" WHERE %s"
/* Which rows of a table are copied (the rows of visible sessions and
 * vocabularies), by the table's kind (cli_migrate.h am_mg_kind). */
#define AM_MGL_WHERE_SESSIONS "substr(id, 1, 1) <> '~'"
#define AM_MGL_WHERE_PER_SESSION "sid IN (SELECT sid FROM sessions WHERE substr(id, 1, 1) <> '~')"
#define AM_MGL_WHERE_VOCABS "substr(name, 1, 1) <> '~'"
#define AM_MGL_WHERE_VOCAB_WORDS                                                                   \
    "vid IN (SELECT vid FROM vocabularies WHERE substr(name, 1, 1) <> '~')"

/* ---- PostgreSQL (the target) ----------------------------------------------- */

/* READ COMMITTED: the copy reads only what it wrote itself and the
 * catalog; a concurrent writer of the same ids fails the commit (unique
 * keys), never mixes rows in. */
#define AM_MGP_BEGIN "BEGIN ISOLATION LEVEL READ COMMITTED"
#define AM_MGP_SETUP "SET client_encoding = 'UTF8'; SET synchronous_commit = on"
/* Serializes two migrations into one target until this transaction ends
 * (a key of its own: "amig"). */
#define AM_MGP_LOCK "SELECT pg_advisory_xact_lock(1634624877)"
#define AM_MGP_MIG_MAX "SELECT coalesce(max(version), 0) FROM schema_migrations"
#define AM_MGP_MIG_INSERT                                                                          \
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)"
#define AM_MGP_COLUMNS                                                                             \
    "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = to_regclass($1) "                     \
    "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
#define AM_MGP_IDS_TEMP                                                                            \
    "CREATE TEMP TABLE am_migrate_ids (id text COLLATE \"C\" PRIMARY KEY) ON COMMIT DROP"
#define AM_MGP_IDS_COPY "COPY am_migrate_ids (id) FROM STDIN"
#define AM_MGP_IDS_TAKEN                                                                           \
    "SELECT s.id FROM sessions s JOIN am_migrate_ids i ON i.id = s.id ORDER BY s.id LIMIT 6"
#define AM_MGP_IDS_TAKEN_N "SELECT count(*) FROM sessions s JOIN am_migrate_ids i ON i.id = s.id"
#define AM_MGP_MAX_SID "SELECT coalesce(max(sid), 0) FROM sessions"
#define AM_MGP_MAX_VID "SELECT coalesce(max(vid), 0) FROM vocabularies"
#define AM_MGP_VOCAB_FIND                                                                          \
    "SELECT vid, words, tokenizer, lang, source_lang FROM vocabularies WHERE name = $1"
#define AM_MGP_VOCAB_WORDS                                                                         \
    "SELECT word, count FROM vocabulary_words WHERE vid = $1 ORDER BY word COLLATE \"C\""
#define AM_MGP_COUNTER_MAX                                                                         \
    "INSERT INTO counters (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE "             \
    "SET value = greatest(counters.value, excluded.value)"
/* The incarnation counter never below an incarnation in use: the next
 * session created gets one no session had (schema/002). */
#define AM_MGP_INCARNATION_FLOOR                                                                   \
    "UPDATE counters SET value = greatest(value, (SELECT coalesce(max(incarnation), 0) "           \
    "FROM sessions)) WHERE name = 'incarnation'"
/* A sequence that replaces the counter (DESIGN-postgres.md §2.5), when the
 * target's schema has one: set so that its next value is above every
 * incarnation in use. */
#define AM_MGP_HAS_INCARNATION_SEQ "SELECT (to_regclass('incarnation_seq') IS NOT NULL)::int"
#define AM_MGP_INCARNATION_SEQ                                                                     \
    "SELECT setval('incarnation_seq', greatest(c.value, 1), c.value > 0) FROM counters c "         \
    "WHERE c.name = 'incarnation'"
#define AM_MGP_IDENTITIES                                                                          \
    "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "       \
    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "            \
    "AND c.relkind = 'r' AND a.attidentity <> '' ORDER BY 1"
/* %s table, %s column (twice, then the table again): the identity's next
 * value above every row's. */
#define AM_MGP_IDENTITY_RESET_FMT                                                                  \
    "SELECT setval(pg_get_serial_sequence('%s', '%s'), coalesce(max(%s), 0) + 1, false) FROM %s"
#define AM_MGP_COUNT_RANGE_FMT "SELECT count(*) FROM %s WHERE %s > $1 AND %s <= $2"
#define AM_MGP_STATES                                                                              \
    "SELECT " AM_MG_STATE_COLS " FROM sessions WHERE sid > $1 AND sid <= $2 ORDER BY sid"
#define AM_MGP_COUNTER_GET "SELECT value FROM counters WHERE name = $1"
#define AM_MGP_SAMPLE_CANDIDATES "SELECT sid, id FROM sessions WHERE segments > removed"
/* %s columns, %s table: the rows of the sampled sessions ($1 a bigint[]). */
#define AM_MGP_ROWS_OF_FMT "SELECT %s FROM %s WHERE sid = ANY($1::bigint[])"
/* The background vocabularies the sampled sessions may name in their
 * options (a superset: any JSON string equal to the name). */
#define AM_MGP_VOCABS_OF                                                                           \
    "SELECT vid FROM vocabularies v WHERE EXISTS (SELECT 1 FROM sessions s WHERE "                 \
    "s.sid = ANY($1::bigint[]) AND strpos(s.options, '\"' || v.name || '\"') > 0)"
#define AM_MGP_VOCAB_ROWS_FMT "SELECT %s FROM %s WHERE vid = ANY($1::bigint[])"
#define AM_MGP_TOTALS "SELECT system, stats FROM totals WHERE sid = $1"

/* ---- the replay's scratch SQLite file (cli_migrate_check.c) ---------------- */

#define AM_MGS_INSERT_FMT "INSERT INTO %s (%s) VALUES (%s)"
#define AM_MGS_BEGIN "BEGIN"
#define AM_MGS_COMMIT "COMMIT"
#define AM_MGS_COUNTERS_CLEAR "DELETE FROM counters"
#define AM_MGS_FIRST_SEGMENT "SELECT request FROM segments WHERE sid = ?1 ORDER BY seq LIMIT 1"

#endif

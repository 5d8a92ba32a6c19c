/*
 * store/sql.h — all of the store's SQL: the constant pragmas and
 * statements run with sqlite3_exec (AM_SQL_*), and every statement it
 * prepares, in one X-macro list (AM_STMTS). Included by store_int.h only,
 * which turns the list into the statement ids (AM_S_*), and conn.c, which
 * keeps their texts and names. Every value coming from a request is bound
 * (?N), never spliced into SQL text.
 */
#ifndef AM_STORE_SQL_H
#define AM_STORE_SQL_H

/* ---- constant SQL run with sqlite3_exec (open.c, conn.c) ----------------- */

#define AM_SQL_MIGRATIONS_TABLE                                                                    \
    "CREATE TABLE IF NOT EXISTS schema_migrations ("                                               \
    " version INTEGER PRIMARY KEY,"                                                                \
    " name TEXT NOT NULL,"                                                                         \
    " applied_at INTEGER NOT NULL)"
#define AM_SQL_ROLLBACK "ROLLBACK"
#define AM_SQL_WAL "PRAGMA journal_mode=WAL"
/* The database ids on page 1 (dbfile.h "Database identity"): one
 * transaction that writes page 1 only. */
#define AM_SQL_USER_VERSION "PRAGMA user_version"
#define AM_SQL_IDS_FMT "BEGIN IMMEDIATE;PRAGMA application_id=%d;PRAGMA user_version=%d;COMMIT"
#define AM_SQL_LIFE_FMT "PRAGMA user_version=%d"
#define AM_SQL_INTEGRITY "PRAGMA integrity_check"
#define AM_SQL_SYNC_FULL "PRAGMA synchronous=FULL"
#define AM_SQL_SYNC_NORMAL "PRAGMA synchronous=NORMAL"
#define AM_SQL_FK_ON "PRAGMA foreign_keys=ON"
#define AM_SQL_FK "PRAGMA foreign_keys"
#define AM_SQL_PAGE_COUNT "PRAGMA page_count"
#define AM_SQL_PAGE_SIZE "PRAGMA page_size"
#define AM_SQL_MAX_PAGES_FMT "PRAGMA max_page_count = %lld" /* snprintf: a number */

/* ---- statements ----------------------------------------------------------- */

/* The current glossary is the glossaries row of the session's version: the
 * sessions row keeps no copy (schema/004), so a POST's read of the row's
 * counters never walks the glossary text's overflow pages. */
#define AM_SESSION_COLS                                                                            \
    "id, options, signature, custom_stopwords, "                                                   \
    "(SELECT g.entries FROM glossaries g WHERE g.sid = sessions.sid "                              \
    "AND g.version = sessions.glossary_version), glossary_version, created_at, "                   \
    "updated_at, segments - removed, version, incarnation, segments"

/* A segment's result: its row of the newest generation not above the
 * session's current one in segment_results when there is one, else
 * segments.result (schema/006). Used with the segments table aliased s and
 * ?1 = sid. */
#define AM_RESULT_COL                                                                              \
    "coalesce((SELECT r.result FROM segment_results r WHERE r.sid = s.sid AND r.seq = s.seq "      \
    "AND r.gen <= (SELECT result_gen FROM sessions WHERE sid = ?1) ORDER BY r.gen DESC LIMIT 1), " \
    "s.result)"
#define AM_RESULT_JOIN " FROM segments s "

/* A segment's ?ci= statistics record (schema/013, server/live/ci_stats.h):
 * the record of the row its result is read from (as AM_RESULT_COL): the
 * newest staged row of segment_results not above the session's current
 * generation (a replay's, schema/014) when there is one, else
 * segments.stats. NULL when that row has none (written before 013/014)
 * or an empty one: the reader computes the statistics from the request
 * and result. Used like AM_RESULT_COL. */
#define AM_STATS_COL                                                                               \
    "nullif(coalesce((SELECT coalesce(r.stats, '') FROM segment_results r WHERE r.sid = s.sid "    \
    "AND r.seq = s.seq AND r.gen <= (SELECT result_gen FROM sessions WHERE sid = ?1) "             \
    "ORDER BY r.gen DESC LIMIT 1), s.stats), '')"

/* A checkpoint row c of session s that a replay may start from
 * (schema/008). */
#define AM_CKPT_VALID "(c.gen <= s.result_gen AND (c.seq <= s.ckpt_after OR c.gen >= s.ckpt_gen))"

/* The seq up to which the history of session ?1 is settled into vocab and
 * occurrences; the words of its later segments are in their rows
 * (schema/010). */
#define AM_SETTLED "(SELECT settled FROM sessions WHERE sid = ?1)"

/* X(name, sql): every statement store.c runs after open. */
#define AM_STMTS(X)                                                                                \
    X(BEGIN_IMM, "BEGIN IMMEDIATE")                                                                \
    X(COMMIT, "COMMIT")                                                                            \
    X(ROLLBACK, "ROLLBACK")                                                                        \
    X(SAVEPOINT, "SAVEPOINT am_nested")                                                            \
    X(RELEASE, "RELEASE am_nested")                                                                \
    X(ROLLBACK_TO, "ROLLBACK TO am_nested")                                                        \
    X(PING, "SELECT max(version) FROM schema_migrations")                                          \
    X(PAGE_COUNT, "PRAGMA page_count")                                                             \
    X(PAGE_SIZE, "PRAGMA page_size")                                                               \
    X(SYNCHRONOUS, "PRAGMA synchronous")                                                           \
    X(MIG_MAX, "SELECT coalesce(max(version), 0) FROM schema_migrations")                          \
    X(MIG_INSERT, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)") \
    X(SID, "SELECT sid FROM sessions WHERE id = ?1")                                               \
    X(SESSION_INSERT, "INSERT INTO sessions (id, options, signature, custom_stopwords, "           \
                      "created_at, updated_at, incarnation) VALUES (?1, ?2, ?3, ?4, ?5, ?5, "      \
                      "(SELECT value FROM counters WHERE name = 'incarnation'))")                  \
    X(INCARNATION_NEXT, "UPDATE counters SET value = value + 1 WHERE name = 'incarnation'")        \
    X(INCARNATION_CUR, "SELECT value FROM counters WHERE name = 'incarnation'")                    \
    X(SESSION_GET, "SELECT " AM_SESSION_COLS " FROM sessions WHERE id = ?1")                       \
    X(SESSION_LIST_FIRST,                                                                          \
      "SELECT " AM_SESSION_COLS " FROM sessions WHERE id < '~' ORDER BY id LIMIT ?1")              \
    X(SESSION_LIST_AFTER, "SELECT " AM_SESSION_COLS " FROM sessions WHERE id > ?1 AND id < '~' "   \
                          "ORDER BY id LIMIT ?2")                                                  \
    X(SESSION_COUNT, "SELECT count(*) FROM sessions WHERE id < '~'")                               \
    X(SESSION_HIDE, "UPDATE sessions SET id = '~del~' || sid WHERE id = ?1 RETURNING sid")         \
    X(SESSION_HIDDEN, "SELECT sid FROM sessions WHERE id >= '~' ORDER BY sid LIMIT 64")            \
    X(PURGE_SEGMENTS, "DELETE FROM segments WHERE rowid IN "                                       \
                      "(SELECT rowid FROM segments WHERE sid = ?1 LIMIT ?2)")                      \
    X(PURGE_RESULTS, "DELETE FROM segment_results WHERE rowid IN "                                 \
                     "(SELECT rowid FROM segment_results WHERE sid = ?1 LIMIT ?2)")                \
    X(PURGE_CHECKPOINTS, "DELETE FROM checkpoints WHERE rowid IN "                                 \
                         "(SELECT rowid FROM checkpoints WHERE sid = ?1 LIMIT ?2)")                \
    X(PURGE_GLOSSARIES, "DELETE FROM glossaries WHERE rowid IN "                                   \
                        "(SELECT rowid FROM glossaries WHERE sid = ?1 LIMIT ?2)")                  \
    X(PURGE_VOCAB, "DELETE FROM vocab WHERE sid = ?1 AND word <= ?2")                              \
    X(PURGE_VOCAB_TO, "SELECT word FROM (SELECT word FROM vocab WHERE sid = ?1 ORDER BY word "     \
                      "LIMIT ?2) ORDER BY word DESC LIMIT 1")                                      \
    X(PURGE_OCC, "DELETE FROM occurrences WHERE sid = ?1 AND (word, seq) <= (?2, ?3)")             \
    X(PURGE_OCC_TO, "SELECT word, seq FROM (SELECT word, seq FROM occurrences WHERE sid = ?1 "     \
                    "ORDER BY word, seq LIMIT ?2) ORDER BY word DESC, seq DESC LIMIT 1")           \
    X(PURGE_TOTALS, "DELETE FROM totals WHERE sid = ?1 AND system <= ?2")                          \
    X(PURGE_TOTALS_TO, "SELECT system FROM (SELECT system FROM totals WHERE sid = ?1 ORDER BY "    \
                       "system LIMIT ?2) ORDER BY system DESC LIMIT 1")                            \
    X(PURGE_CHOICES, "DELETE FROM choices WHERE sid = ?1 AND (entry, alt) <= (?2, ?3)")            \
    X(PURGE_CHOICES_TO, "SELECT entry, alt FROM (SELECT entry, alt FROM choices WHERE sid = ?1 "   \
                        "ORDER BY entry, alt LIMIT ?2) ORDER BY entry DESC, alt DESC LIMIT 1")     \
    X(PURGE_SESSION, "DELETE FROM sessions WHERE sid = ?1")                                        \
    X(GLOSSARY_PUT, "UPDATE sessions SET glossary_version = glossary_version + 1, "                \
                    "version = version + 1, updated_at = ?2 WHERE id = ?1 "                        \
                    "AND (?3 = 0 OR incarnation = ?3)")                                            \
    X(GLOSSARY_KEEP, "INSERT INTO glossaries (sid, version, entries, created_at) "                 \
                     "SELECT sid, glossary_version, ?2, updated_at FROM sessions "                 \
                     "WHERE id = ?1")                                                              \
    X(GLOSSARY_VERSION, "SELECT entries FROM glossaries WHERE sid = ?1 AND version = ?2")          \
    X(GLOSSARY_CUR, "SELECT glossary_version FROM sessions WHERE id = ?1")                         \
    X(SESSION_STATE, "SELECT sid, segments, version, incarnation, glossary_version, "              \
                     "segments - removed FROM sessions WHERE id = ?1")                             \
    X(SESSION_TOUCH, "UPDATE sessions SET segments = max(segments, ?2), updated_at = ?3, "         \
                     "version = version + 1 WHERE sid = ?1")                                       \
    X(SESSION_TOUCH_N, "UPDATE sessions SET segments = max(segments, ?2), updated_at = ?3, "       \
                       "version = version + ?4 WHERE sid = ?1")                                    \
    X(SESSION_BUMP, "UPDATE sessions SET version = version + 1, rewrites = rewrites + 1 "          \
                    "WHERE sid = ?1")                                                              \
    X(SESSION_STAMP, "SELECT incarnation, rewrites FROM sessions WHERE sid = ?1")                  \
    X(SEG_FIND, "SELECT s.seq, s.body_hash, " AM_RESULT_COL AM_RESULT_JOIN                         \
                "WHERE s.sid = ?1 AND s.client_id = ?2")                                           \
    X(SEG_KNOWN, "SELECT client_id, seq FROM segments WHERE sid = ?1 AND client_id IN "            \
                 "(SELECT value FROM json_each(?2))")                                              \
    X(SEG_INSERT, "INSERT INTO segments (sid, seq, client_id, body_hash, request, result, "        \
                  "created_at, updated_at, glossary_version, words, stats) "                       \
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9, ?10)")                          \
    X(SEG_UPDATE, "UPDATE segments SET body_hash = COALESCE(?3, body_hash), "                      \
                  "request = COALESCE(?4, request), result = ?5, stats = ?7, "                     \
                  "updated_at = ?6 WHERE sid = ?1 AND seq = ?2")                                   \
    X(SEG_WALK, "SELECT seq, client_id, request, glossary_version FROM segments "                  \
                "WHERE sid = ?1 AND seq >= ?2 "                                                    \
                "ORDER BY seq")                                                                    \
    X(SEG_EACH,                                                                                    \
      "SELECT s.seq, s.client_id, s.request, " AM_RESULT_COL ", s.created_at" AM_RESULT_JOIN       \
      "WHERE s.sid = ?1 AND s.seq > ?2 ORDER BY s.seq LIMIT ?3")                                   \
    X(SEG_RESULTS_EACH,                                                                            \
      "SELECT s.seq, s.client_id, NULL, " AM_RESULT_COL ", s.created_at" AM_RESULT_JOIN            \
      "WHERE s.sid = ?1 AND s.seq > ?2 ORDER BY s.seq LIMIT ?3")                                   \
    X(SEG_STATS_EACH,                                                                              \
      "SELECT s.seq, " AM_STATS_COL ", CASE WHEN " AM_STATS_COL " IS NULL THEN s.request END, "    \
      "CASE WHEN " AM_STATS_COL " IS NULL THEN " AM_RESULT_COL " END" AM_RESULT_JOIN               \
      "WHERE s.sid = ?1 AND s.seq > ?2 ORDER BY s.seq LIMIT ?3")                                   \
    X(SEG_GET, "SELECT s.seq, s.request, " AM_RESULT_COL AM_RESULT_JOIN                            \
               "WHERE s.sid = ?1 AND s.client_id = ?2")                                            \
    X(SEG_RESULT,                                                                                  \
      "SELECT s.client_id, " AM_RESULT_COL AM_RESULT_JOIN "WHERE s.sid = ?1 AND s.seq = ?2")       \
    X(RESULT_GEN, "SELECT result_gen FROM sessions WHERE sid = ?1")                                \
    X(RESULT_STAGE, "INSERT INTO segment_results (sid, gen, seq, result, stats) "                  \
                    "VALUES (?1, ?2, ?3, ?4, ?5)")                                                 \
    X(RESULT_REUSE,                                                                                \
      "UPDATE segment_results SET gen = ?2, result = ?4, stats = ?6 WHERE rowid = (SELECT "        \
      "r.rowid FROM "                                                                              \
      "segment_results r WHERE r.sid = ?1 AND r.seq = ?3 AND (r.gen > ?5 OR r.gen < (SELECT "      \
      "max(n.gen) FROM segment_results n WHERE n.sid = ?1 AND n.seq = ?3 AND n.gen <= ?5)) "       \
      "LIMIT 1)")                                                                                  \
    X(RESULT_ABANDONED, "SELECT 1 FROM segment_results WHERE sid = ?1 AND gen > ?2 LIMIT 1")       \
    X(RESULT_SWITCH, "UPDATE sessions SET result_gen = ?2 WHERE sid = ?1")                         \
    X(RESULT_STALE_DEL,                                                                            \
      "DELETE FROM segment_results WHERE rowid IN (SELECT r.rowid FROM segment_results r "         \
      "WHERE r.sid = ?1 AND r.seq >= ?3 AND r.seq < ?4 AND (r.gen > ?2 OR (SELECT count(*) FROM "  \
      "segment_results n WHERE n.sid = r.sid AND n.seq = r.seq AND n.gen > r.gen AND "             \
      "n.gen <= ?2) >= 2))")                                                                       \
    X(RESULT_MAX_SEQ, "SELECT coalesce(max(seq), 0) FROM segment_results WHERE sid = ?1")          \
    X(RESULT_CLEAR, "DELETE FROM segment_results WHERE sid = ?1")                                  \
    X(GV_FLOOR, "SELECT gv_floor FROM sessions WHERE sid = ?1")                                    \
    X(RESCORE_MARK, "UPDATE sessions SET gv_floor = ?2, updated_at = ?3 WHERE sid = ?1")           \
    X(OCC_EACH, "SELECT word, seq FROM occurrences WHERE sid = ?1")                                \
    X(VOCAB_SET,                                                                                   \
      "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) VALUES (?1, ?2, ?3, ?4, ?5) "       \
      "ON CONFLICT (sid, word) DO UPDATE SET occ = excluded.occ, first_seq = excluded.first_seq, " \
      "last_seq = excluded.last_seq")                                                              \
    X(VOCAB_DEL, "DELETE FROM vocab WHERE sid = ?1 AND word = ?2")                                 \
    X(SEG_GLOSSARY_CHANGES,                                                                        \
      "WITH RECURSIVE v(version) AS (SELECT min(glossary_version) FROM segments WHERE sid = ?1 "   \
      "UNION ALL SELECT (SELECT min(glossary_version) FROM segments WHERE sid = ?1 "               \
      "AND glossary_version > v.version) FROM v WHERE v.version IS NOT NULL) "                     \
      "SELECT (SELECT min(seq) FROM segments WHERE sid = ?1 AND glossary_version = v.version) "    \
      "AS first, version FROM v WHERE version IS NOT NULL ORDER BY first, version")                \
    X(VOCAB_GET, "SELECT occ FROM vocab WHERE sid = ?1 AND word = ?2")                             \
    X(VOCAB_EACH, "SELECT word, occ FROM vocab WHERE sid = ?1")                                    \
    X(VOCAB_UPSERT, "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                     \
                    "VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (sid, word) DO UPDATE "                \
                    "SET occ = occ + 1, last_seq = excluded.last_seq")                             \
    X(OCC_INSERT, "INSERT INTO occurrences (sid, word, seq) VALUES (?1, ?2, ?3)")                  \
    X(VOCAB_PUT, "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                        \
                 "VALUES (?1, ?2, ?3, ?4, ?5)")                                                    \
    X(VOCAB_UPSERT_ALL, "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                 \
                        "SELECT ?1, value, 1, ?3, ?3 FROM json_each(?2) WHERE true "               \
                        "ON CONFLICT (sid, word) DO UPDATE "                                       \
                        "SET occ = occ + 1, last_seq = excluded.last_seq")                         \
    X(OCC_INSERT_ALL, "INSERT INTO occurrences (sid, word, seq) "                                  \
                      "SELECT ?1, value, ?3 FROM json_each(?2)")                                   \
    X(OCC_SEQS, "SELECT seq FROM occurrences WHERE sid = ?1 AND word = ?2 ORDER BY seq")           \
    X(PENDING_EACH, "SELECT j.value, p.seq FROM segments p, json_each(p.words) j "                 \
                    "WHERE p.sid = ?1 AND p.seq > " AM_SETTLED " ORDER BY p.seq")                  \
    X(PENDING_SEQS, "SELECT p.seq FROM segments p, json_each(p.words) j "                          \
                    "WHERE p.sid = ?1 AND p.seq > " AM_SETTLED " AND j.value = ?2 ORDER BY p.seq") \
    X(SETTLE_VOCAB,                                                                                \
      "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                                   \
      "SELECT ?1, j.value, 1, p.seq, p.seq "                                                       \
      "FROM segments p, json_each(p.words) j WHERE p.sid = ?1 AND p.seq > " AM_SETTLED             \
      " ON CONFLICT (sid, word) DO UPDATE "                                                        \
      "SET occ = occ + 1, first_seq = min(first_seq, excluded.first_seq), "                        \
      "last_seq = max(last_seq, excluded.last_seq)")                                               \
    X(SETTLE_OCC,                                                                                  \
      "INSERT INTO occurrences (sid, word, seq) SELECT ?1, j.value, p.seq "                        \
      "FROM segments p, json_each(p.words) j WHERE p.sid = ?1 AND p.seq > " AM_SETTLED)            \
    X(PENDING_CLEAR, "UPDATE sessions SET settled = segments WHERE sid = ?1")                      \
    X(VOCAB_CLEAR, "DELETE FROM vocab WHERE sid = ?1")                                             \
    X(OCC_CLEAR, "DELETE FROM occurrences WHERE sid = ?1")                                         \
    X(TOTALS_CLEAR, "DELETE FROM totals WHERE sid = ?1")                                           \
    X(CHOICE_INCR, "INSERT INTO choices (sid, entry, alt, count) VALUES (?1, ?2, ?3, 1) "          \
                   "ON CONFLICT (sid, entry, alt) DO UPDATE SET count = count + 1")                \
    X(CHOICE_CLEAR, "DELETE FROM choices WHERE sid = ?1")                                          \
    X(CHOICE_ADD, "INSERT INTO choices (sid, entry, alt, count) VALUES (?1, ?2, ?3, ?4) "          \
                  "ON CONFLICT (sid, entry, alt) DO UPDATE SET count = count + excluded.count")    \
    X(OCC_DELETE, "DELETE FROM occurrences WHERE sid = ?1 AND word = ?2 AND seq = ?3")             \
    X(VOCAB_SHRINK,                                                                                \
      "UPDATE vocab SET occ = occ - 1, "                                                           \
      "first_seq = coalesce((SELECT min(seq) FROM occurrences WHERE sid = ?1 AND word = ?2), 0), " \
      "last_seq = coalesce((SELECT max(seq) FROM occurrences WHERE sid = ?1 AND word = ?2), 0) "   \
      "WHERE sid = ?1 AND word = ?2")                                                              \
    X(VOCAB_DROP_EMPTY, "DELETE FROM vocab WHERE sid = ?1 AND word = ?2 AND occ <= 0")             \
    X(VOCAB_WIDEN, "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                      \
                   "VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (sid, word) DO UPDATE "                 \
                   "SET occ = occ + 1, first_seq = min(first_seq, excluded.first_seq), "           \
                   "last_seq = max(last_seq, excluded.last_seq)")                                  \
    X(SEG_DELETE, "DELETE FROM segments WHERE sid = ?1 AND seq = ?2")                              \
    X(SESSION_SHRINK, "UPDATE sessions SET removed = removed + 1, updated_at = ?2, "               \
                      "version = version + 1, rewrites = rewrites + 1 WHERE sid = ?1")             \
    X(CHOICE_EACH, "SELECT alt, count FROM choices WHERE sid = ?1 AND entry = ?2 "                 \
                   "ORDER BY count DESC, alt")                                                     \
    X(TOTALS_GET, "SELECT stats FROM totals WHERE sid = ?1 AND system = ?2")                       \
    X(TOTALS_PUT, "INSERT INTO totals (sid, system, stats) VALUES (?1, ?2, ?3) "                   \
                  "ON CONFLICT (sid, system) DO UPDATE SET stats = excluded.stats")                \
    X(TOTALS_EACH, "SELECT system, stats FROM totals WHERE sid = ?1 ORDER BY system")              \
    X(CKPT_TAKE, "INSERT OR REPLACE INTO checkpoints (sid, seq, gen, system, stats) "              \
                 "SELECT t.sid, ?2, s.result_gen, t.system, t.stats FROM totals t "                \
                 "JOIN sessions s ON s.sid = t.sid WHERE t.sid = ?1")                              \
    X(CKPT_LAST, "SELECT c.seq, c.gen FROM checkpoints c JOIN sessions s ON s.sid = c.sid "        \
                 "WHERE c.sid = ?1 AND c.seq < ?2 AND " AM_CKPT_VALID                              \
                 " ORDER BY c.seq DESC, c.gen DESC LIMIT 1")                                       \
    X(CKPT_EACH, "SELECT system, stats FROM checkpoints WHERE sid = ?1 AND seq = ?2 AND gen = ?3") \
    X(CKPT_STAGE, "INSERT OR REPLACE INTO checkpoints (sid, seq, gen, system, stats) "             \
                  "VALUES (?1, ?2, ?3, ?4, ?5)")                                                   \
    X(CKPT_SETTLE,                                                                                 \
      "DELETE FROM checkpoints WHERE rowid IN (SELECT c.rowid FROM checkpoints c "                 \
      "JOIN sessions s ON s.sid = c.sid WHERE c.sid = ?1 AND NOT " AM_CKPT_VALID " LIMIT ?2)")     \
    X(CKPT_CUT, "UPDATE sessions SET ckpt_after = ?2, ckpt_gen = ?3 WHERE sid = ?1")               \
    X(CKPT_CLEAR, "DELETE FROM checkpoints WHERE sid = ?1")                                        \
    X(OCC_UPTO, "SELECT word, count(*) FROM occurrences WHERE sid = ?1 AND seq <= ?2 "             \
                "GROUP BY word")                                                                   \
    X(CHOICE_DROP_EMPTY, "DELETE FROM choices WHERE sid = ?1 AND entry = ?2 AND alt = ?3 "         \
                         "AND count <= 0")                                                         \
    X(BG_GET, "SELECT w.count FROM vocabularies v JOIN vocabulary_words w ON w.vid = v.vid "       \
              "WHERE v.name = ?1 AND w.word = ?2")                                                 \
    X(VOCABULARY_DELETE, "DELETE FROM vocabularies WHERE name = ?1")                               \
    X(VOCABULARY_INSERT,                                                                           \
      "INSERT INTO vocabularies (name, words, created_at, tokenizer, lang, source_lang) "          \
      "VALUES (?1, 0, ?2, ?3, ?4, ?5) RETURNING vid")                                              \
    X(VOCABULARY_WORD, "INSERT INTO vocabulary_words (vid, word, count) VALUES (?1, ?2, ?3) "      \
                       "ON CONFLICT (vid, word) DO UPDATE SET count = count + excluded.count")     \
    X(VOCABULARY_SIZE, "UPDATE vocabularies SET words = (SELECT count(*) FROM vocabulary_words "   \
                       "WHERE vid = ?1) WHERE vid = ?1")                                           \
    X(VOCABULARY_INFO, "SELECT words, created_at FROM vocabularies WHERE name = ?1")               \
    X(VOCABULARY_META, "SELECT words, created_at, tokenizer, lang, source_lang FROM vocabularies " \
                       "WHERE name = ?1")                                                          \
    X(VOCABULARY_VID, "SELECT vid FROM vocabularies WHERE name = ?1")                              \
    X(VOCABULARY_EACH, "SELECT word, count FROM vocabulary_words WHERE vid = ?1 ORDER BY word")    \
    X(VOCABULARY_RENAME, "UPDATE vocabularies SET name = ?2 WHERE vid = ?1")                       \
    X(VOCABULARY_DROP_VID, "DELETE FROM vocabularies WHERE vid = ?1")                              \
    X(VOCABULARY_WORDS_CHUNK, "DELETE FROM vocabulary_words WHERE vid = ?1 AND word <= "           \
                              "(SELECT max(word) FROM (SELECT word FROM vocabulary_words "         \
                              "WHERE vid = ?1 ORDER BY word LIMIT ?2))")                           \
    X(VOCABULARY_HIDDEN, "SELECT vid FROM vocabularies WHERE substr(name, 1, 1) = '~'")

#endif

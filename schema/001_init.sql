-- 001_init.sql — adaptmon's initial schema (see server/store.h).
--
-- Sessions get a compact integer key (sid) that every per-session table
-- uses; the public text id is unique. Child rows are removed with the
-- session (ON DELETE CASCADE; foreign_keys is ON on every connection).
-- Small fixed-shape tables keyed by their natural key are WITHOUT ROWID;
-- tables holding large JSON texts (sessions, segments) keep a rowid.
-- Applied by store.c in one transaction, which records the version in
-- schema_migrations.

CREATE TABLE sessions (
    sid              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    options          TEXT    NOT NULL,
    signature        TEXT    NOT NULL,
    custom_stopwords TEXT,
    glossary         TEXT,
    glossary_version INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    segments         INTEGER NOT NULL DEFAULT 0,
    version          INTEGER NOT NULL DEFAULT 1
);

-- One row per confirmed segment; seq is 1, 2, … within a session.
CREATE TABLE segments (
    sid        INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    client_id  TEXT,
    body_hash  TEXT    NOT NULL,
    request    TEXT    NOT NULL,
    result     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (sid, seq)
);
CREATE UNIQUE INDEX segments_client ON segments (sid, client_id);

-- Per-session vocabulary: occ = number of segments containing the word.
CREATE TABLE vocab (
    sid       INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    word      TEXT    NOT NULL,
    occ       INTEGER NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq  INTEGER NOT NULL,
    PRIMARY KEY (sid, word)
) WITHOUT ROWID;

-- Which segments contain a word (the word's history), in seq order.
CREATE TABLE occurrences (
    sid  INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    word TEXT    NOT NULL,
    seq  INTEGER NOT NULL,
    PRIMARY KEY (sid, word, seq)
) WITHOUT ROWID;

-- Running totals per system (JSON of am_totals).
CREATE TABLE totals (
    sid    INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    system TEXT    NOT NULL,
    stats  TEXT    NOT NULL,
    PRIMARY KEY (sid, system)
) WITHOUT ROWID;

-- Term choices: how often the translator used target alternative alt of
-- the glossary entry with source entry (normalized text).
CREATE TABLE choices (
    sid   INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    entry TEXT    NOT NULL,
    alt   TEXT    NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (sid, entry, alt)
) WITHOUT ROWID;

-- Background vocabularies (word counts from a reference corpus), by name.
CREATE TABLE vocabularies (
    vid        INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    words      INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE vocabulary_words (
    vid   INTEGER NOT NULL REFERENCES vocabularies (vid) ON DELETE CASCADE,
    word  TEXT    NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (vid, word)
) WITHOUT ROWID;

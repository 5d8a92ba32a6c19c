#!/usr/bin/env python3
"""Black-box tests (issue 24 §1, §3): a background vocabulary records how it
was counted, and a session that would read it otherwise is refused.

* PUT /v1/vocabularies/{name} of a TMX memory records the recall tokenizer
  it counted with (MeCab for ja, zh characters for zh, intl for fr, or the
  one named by ?tokenizer=), the side counted and the source language
  checked; PUT and GET echo them. A count list records none.
* A session whose recall tokenizer (by name), target_lang or source_lang
  differs from the vocabulary's is a 422 naming both and what to do.
* ?source_lang= is checked against the memory: a header srclang or <tuv>
  languages of another language are a 422 naming both (real file: the
  LISA compliance kit's ImportTest1B.tmx from Okapi, tests/data/real).
* A vocabulary stored before schema/012 (no tokenizer column) gets the
  marker "auto:1": the tokenizer defaults 1 picked for the language then
  (zh characters for ja), so a new ja session (ja-mecab) refuses it, one
  with defaults 1 takes it, and a fr session takes it.
* A vocabulary replaced after a session took it (same name, counted with
  another tokenizer) is refused when the session's runtime is next built
  (409 naming both), never read with the wrong words; PUT back as the
  session counts, the session works again.

Prints "ok NAME" / "FAILED NAME" and ends with "N passed, N failed".
APITEST_ONLY=REGEX runs a subset.
"""
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (ROOT, Server, check, eq, expect_problem, expect_status,  # noqa: E402
                     run_tests, serve, shutdown, sqlite_only)

TMX_CT = "application/x-tmx+xml"
S = None
C = None


def setup():
    global S, C
    S, C = serve()


def teardown():
    shutdown(S, C)


def tmx(pairs, src="en", tgt="fr", srclang="en"):
    head = '<header srclang="%s" segtype="sentence"/>' % srclang if srclang else "<header/>"
    tus = "".join('<tu><tuv xml:lang="%s"><seg>%s</seg></tuv><tuv xml:lang="%s"><seg>%s</seg>'
                  '</tuv></tu>' % (src, s, tgt, t) for s, t in pairs)
    return '<?xml version="1.0"?><tmx version="1.4">%s<body>%s</body></tmx>' % (head, tus)


JA = tmx([("I ate sushi.", "私は寿司を食べました。"), ("Tokyo is big.", "東京は大きいです。")],
         tgt="ja")
FR = tmx([("the cat", "le chat noir"), ("a dog", "un chien")])


def session(sid, tl="fr", sl="en", **opts):
    return C.post("/v1/sessions", {"id": sid, "source_lang": sl, "target_lang": tl,
                                   "options": opts})


def test_put_and_get_echo_the_tokenizer():
    r = C.put("/v1/vocabularies/ja1", JA, ctype=TMX_CT)
    expect_status(r, 201, "PUT ja TMX")
    d = r.json()
    eq((d.get("tokenizer"), d.get("lang")), ("ja-mecab", "ja"), "PUT echo")
    g = C.jget("/v1/vocabularies/ja1")
    eq((g.get("tokenizer"), g.get("lang"), g["words"]), ("ja-mecab", "ja", d["words"]),
       "GET echo")
    r = C.put("/v1/vocabularies/ja-zh?lang=ja&tokenizer=zh", JA, ctype=TMX_CT)
    expect_status(r, 201, "PUT ja TMX counted with zh")
    eq(r.json().get("tokenizer"), "zh", "?tokenizer= counts with it")
    check(r.json()["words"] != d["words"], "zh characters are other words than MeCab's")
    r = C.put("/v1/vocabularies/fr1", FR, ctype=TMX_CT)
    eq(r.json().get("tokenizer"), "intl", "fr counted with intl")
    r = C.put("/v1/vocabularies/list1", "3 chat\n1 chien\n", ctype="text/plain")
    expect_status(r, 201, "PUT count list")
    check("tokenizer" not in r.json() and "tokenizer" not in C.jget("/v1/vocabularies/list1"),
          "a count list records no tokenizer")
    r = C.put("/v1/vocabularies/badtok?tokenizer=bogus", FR, ctype=TMX_CT)
    expect_problem(r, 422, "invalid-value", "unknown tokenizer")
    eq(r.json().get("field"), "tokenizer", "field of the refusal")


def test_session_refuses_a_vocabulary_of_another_tokenizer():
    expect_status(C.put("/v1/vocabularies/ja-chars?lang=ja&tokenizer=zh", JA, ctype=TMX_CT),
                  201, "PUT")
    r = session("ja-new", tl="ja", rare_threshold=1, background_vocabulary="ja-chars")
    expect_problem(r, 422, "invalid-value", "zh-counted vocabulary, ja-mecab session")
    det = r.json()["detail"]
    check("zh" in det and "ja-mecab" in det and "re-import" in det, det)
    expect_status(C.get("/v1/sessions/ja-new"), 404, "nothing created")
    # the same vocabulary fits a session that tokenizes with zh
    r = session("ja-zh", tl="ja", rare_threshold=1, background_vocabulary="ja-chars",
                tokenizer="zh")
    expect_status(r, 201, "zh session with the zh vocabulary")
    # and a MeCab-counted one fits the default ja session
    expect_status(C.put("/v1/vocabularies/ja-mecab", JA, ctype=TMX_CT), 201, "PUT")
    expect_status(session("ja-ok", tl="ja", rare_threshold=1, background_vocabulary="ja-mecab"),
                  201, "ja-mecab session with the ja-mecab vocabulary")
    # a fr memory counted with 13a attached to an intl session
    expect_status(C.put("/v1/vocabularies/fr13a?tokenizer=13a", FR, ctype=TMX_CT), 201, "PUT")
    r = session("fr-intl", rare_threshold=1, background_vocabulary="fr13a")
    expect_problem(r, 422, "invalid-value", "13a vocabulary, intl session")
    check("13a" in r.json()["detail"] and "intl" in r.json()["detail"], r.json()["detail"])
    # a count list is the uploader's words: never refused for its tokenizer
    expect_status(C.put("/v1/vocabularies/list2", "1 chat\n", ctype="text/plain"), 201, "PUT")
    expect_status(session("fr-list", rare_threshold=1, background_vocabulary="list2"), 201,
                  "count list")


def test_session_refuses_a_vocabulary_of_another_language():
    expect_status(C.put("/v1/vocabularies/fr2", FR, ctype=TMX_CT), 201, "PUT")
    r = session("de-fr2", tl="de", rare_threshold=1, background_vocabulary="fr2")
    expect_problem(r, 422, "invalid-value", "fr vocabulary, de session")
    check("fr" in r.json()["detail"] and "de" in r.json()["detail"], r.json()["detail"])
    eq(r.json().get("field"), "target_lang", "field")
    expect_status(C.put("/v1/vocabularies/fr3?source_lang=en", FR, ctype=TMX_CT), 201, "PUT")
    eq(C.jget("/v1/vocabularies/fr3").get("source_lang"), "en", "source_lang echoed")
    r = session("es-fr3", sl="es", rare_threshold=1, background_vocabulary="fr3")
    expect_problem(r, 422, "invalid-value", "en->fr vocabulary, es->fr session")
    eq(r.json().get("field"), "source_lang", "field")
    expect_status(session("en-fr3", rare_threshold=1, background_vocabulary="fr3"), 201, "en->fr")


def test_put_checks_source_lang_against_the_memory():
    r = C.put("/v1/vocabularies/src-de?source_lang=de", FR, ctype=TMX_CT)
    expect_problem(r, 422, "invalid-value", "header srclang en, source_lang de")
    det = r.json()["detail"]
    check("srclang en" in det and "de" in det, det)
    expect_status(C.get("/v1/vocabularies/src-de"), 404, "nothing stored")
    # no header srclang: the <tuv> languages must hold the source language
    r = C.put("/v1/vocabularies/src-de2?source_lang=de", tmx([("a", "b")], srclang=None),
              ctype=TMX_CT)
    expect_problem(r, 422, "invalid-value", "no de side")
    check("de" in r.json()["detail"] and "en, fr" in r.json()["detail"], r.json()["detail"])
    # without a header srclang the source language picks the counted side
    r = C.put("/v1/vocabularies/src-en?source_lang=en", tmx([("a", "chat")], srclang=None),
              ctype=TMX_CT)
    expect_status(r, 201, "side picked by source_lang")
    eq(r.json().get("lang"), "fr", "the non-source side")


def test_real_tmx_source_language():
    """The LISA TMX compliance kit (Okapi, tests/data/real/okapi): ImportTest1B.tmx is an
    en-US memory; a de source is refused naming both, en-US is counted."""
    with open(os.path.join(ROOT, "tests", "data", "real", "okapi", "ImportTest1B.tmx"),
              "rb") as f:
        body = f.read()
    r = C.put("/v1/vocabularies/kit-de?source_lang=de", body, ctype=TMX_CT)
    expect_problem(r, 422, "invalid-value", "compliance kit, source de")
    check("en" in r.json()["detail"].lower() and "de" in r.json()["detail"], r.json()["detail"])
    r = C.put("/v1/vocabularies/kit-en?source_lang=en-US", body, ctype=TMX_CT)
    check(r.status in (200, 201), "en-US source accepted: %d %s" % (r.status, r.body[:300]))


def test_vocabulary_stored_before_schema_012():
    sqlite_only("the SQLite schema history (schema/pg starts at 012)")
    srv, cli = serve()
    db = srv.db
    try:
        expect_status(cli.put("/v1/vocabularies/old-ja", "2 寿\n1 司\n", ctype="text/plain"),
                      201, "PUT")
    finally:
        shutdown(srv, cli)
    # the database as a release before schema/012 left it
    con = sqlite3.connect(db)
    con.executescript("ALTER TABLE vocabularies DROP COLUMN tokenizer;"
                      "ALTER TABLE vocabularies DROP COLUMN lang;"
                      "ALTER TABLE vocabularies DROP COLUMN source_lang;"
                      "ALTER TABLE segments DROP COLUMN stats;"  # 013
                      "ALTER TABLE segment_results DROP COLUMN stats;"  # 014
                      "ALTER TABLE sessions DROP COLUMN gv_floor;"  # 015
                      "DELETE FROM schema_migrations WHERE version >= 12;")
    con.close()
    srv = Server(db=db)
    cli = srv.client()
    try:
        eq(cli.jget("/v1/vocabularies/old-ja").get("tokenizer"), "auto:1", "migrated marker")
        r = cli.post("/v1/sessions", {"id": "new-ja", "source_lang": "en", "target_lang": "ja",
                                      "options": {"rare_threshold": 1,
                                                  "background_vocabulary": "old-ja"}})
        expect_problem(r, 422, "invalid-value", "pre-012 ja vocabulary, ja-mecab session")
        det = r.json()["detail"]
        check("zh" in det and "ja-mecab" in det and "before issue 24" in det, det)
        for sid, tl, extra in (("old-defaults", "ja", {"defaults": 1}), ("fr", "fr", {})):
            opts = dict({"rare_threshold": 1, "background_vocabulary": "old-ja"}, **extra)
            r = cli.post("/v1/sessions", {"id": sid, "source_lang": "en", "target_lang": tl,
                                          "options": opts})
            expect_status(r, 201, "pre-012 vocabulary for %s %r" % (tl, extra))
    finally:
        shutdown(srv, cli)


def test_vocabulary_replaced_after_the_session_took_it():
    srv, cli = serve()
    db = srv.db
    seg = {"id": "s1", "source": "the black cat", "hypothesis": "le chat noir",
           "translation": "le chat noir"}
    try:
        expect_status(cli.put("/v1/vocabularies/fr-v", FR, ctype=TMX_CT), 201, "PUT intl")
        r = cli.post("/v1/sessions", {"id": "fr-v", "source_lang": "en", "target_lang": "fr",
                                      "options": {"rare_threshold": 1,
                                                  "background_vocabulary": "fr-v"}})
        expect_status(r, 201, "session with the intl vocabulary")
        expect_status(cli.post("/v1/sessions/fr-v/segments", seg), 201, "POST s1")
        # the same name, counted with 13a: the session's words are intl's
        expect_status(cli.put("/v1/vocabularies/fr-v?tokenizer=13a", FR, ctype=TMX_CT), 200,
                      "PUT 13a over it")
    finally:
        shutdown(srv, cli)
    srv = Server(db=db)  # a fresh process builds the session's runtime again
    cli = srv.client()
    try:
        r = cli.post("/v1/sessions/fr-v/segments", dict(seg, id="s2"))
        expect_problem(r, 409, "conflict", "POST with a vocabulary counted otherwise")
        det = r.json()["detail"]
        check("13a" in det and "intl" in det, det)
        eq(cli.jget("/v1/sessions/fr-v/segments")["segments"][-1]["id"], "s1", "nothing stored")
        expect_status(cli.put("/v1/vocabularies/fr-v?tokenizer=intl", FR, ctype=TMX_CT), 200,
                      "PUT intl again")
        expect_status(cli.post("/v1/sessions/fr-v/segments", dict(seg, id="s2")), 201,
                      "POST after the vocabulary fits again")
    finally:
        shutdown(srv, cli)


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))

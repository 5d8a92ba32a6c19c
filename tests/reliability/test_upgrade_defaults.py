#!/usr/bin/env python3
"""A session keeps the tokenizers it was created with across an upgrade
(issue 24: the release that made "auto" resolve to ja-mecab for a ja
target's recall and to sacreBLEU -l's choice for BLEU).

A session stored by an older release has its word history and BLEU
sufficient statistics counted with the old tokenizers (recall: zh for ja;
BLEU: 13a for every language). Resolving "auto" anew after the upgrade
would mix two tokenizations in one history and one set of running totals
without a word. schema/011 gives such sessions the option defaults 1 (the
old resolution) and new sessions store the current defaults (3: recall
zh-friso for zh, since friso was wired) at creation.

  * test_crafted_old_sessions_keep_old_tokenizers (always runs): a
    database whose sessions are stored as an old release stored them
    (options without "defaults" or the zh/ja TER pins, schema_migrations
    without 011, segments scored with the old tokenizers) is opened by this
    binary: the echo names zh / 13a, more segments, an edit (PUT) and a
    rescore are scored with them and the totals equal a replay of every segment under the stored options;
    the same replay under today's defaults differs (so the check can fail);
  * test_new_session_pins_current_defaults: a new ja session stores
    defaults 3 and runs ja-mecab for recall and BLEU; a new zh session
    runs zh-friso for recall (friso's words) and zh for BLEU;
  * test_defaults2_zh_keeps_characters: a zh session stored with defaults 2
    (the release before friso) keeps one token per character for recall
    across a restart, and its totals equal a replay under its stored
    options, not under today's (zh-friso);
  * test_old_binary_database (runs when ADAPTMON_OLD_BIN names a build of
    the pre-issue-24 commit 5a30b6b, skipped otherwise): the same with a
    database the old binary wrote. To run it:
      mkdir /tmp/old && git archive 5a30b6b | tar -x -C /tmp/old && make -C /tmp/old all
      ADAPTMON_OLD_BIN=/tmp/old/build/adaptmon python3 tests/reliability/test_upgrade_defaults.py
"""
import json
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
import harness  # noqa: E402
from harness import Server, Skip, check, eq, expect_status, run_tests, tmpdir  # noqa: E402

OLD_BIN = os.environ.get("ADAPTMON_OLD_BIN", "")

# en->ja and en->zh pairs whose BLEU and recall differ between the old and
# the new tokenizers (unspaced text: 13a keeps a sentence as one token).
JA = [("I read a book in the library yesterday.", "昨日図書館で本を読みました。",
       "昨日、図書館で本を読んだ。"),
      ("The weather is nice today.", "今日は天気がいいです。", "今日はいい天気です。"),
      ("Please send the report by Friday.", "金曜日までに報告書を送ってください。",
       "報告書を金曜日までに送付してください。"),
      ("The meeting was postponed until next week.", "会議は来週まで延期されました。",
       "会議は来週に延期された。"),
      ("Our company develops translation software.", "当社は翻訳ソフトウェアを開発しています。",
       "当社は翻訳ソフトを開発しています。"),
      ("The library opens at nine.", "図書館は九時に開きます。", "図書館は九時に開館します。")]
ZH = [("I read a book in the library yesterday.", "我昨天在图书馆看书。", "我昨天在图书馆读了一本书。"),
      ("The weather is nice today.", "今天天气很好。", "今天天气不错。"),
      ("Please send the report by Friday.", "请在星期五之前发送报告。", "请于周五前发送报告。"),
      ("The meeting was postponed until next week.", "会议被推迟到下周。", "会议推迟到了下周。"),
      ("Our company develops translation software.", "我们公司开发翻译软件。", "本公司开发翻译软件。"),
      ("The library opens at nine.", "图书馆九点开门。", "图书馆九点开放。")]
DATA = {"ja": JA, "zh": ZH}


def post(c, sid, pairs, start):
    for i, (src, hyp, tr) in enumerate(pairs):
        r = c.post("/v1/sessions/%s/segments" % sid,
                   {"id": "s%d" % (start + i), "source": src, "hypothesis": hyp, "translation": tr})
        expect_status(r, 201, "POST segment %d of %s" % (start + i, sid))


def stored(db):
    """{session id: stored options (dict)} of a stopped server's database."""
    con = sqlite3.connect(db)
    try:
        return {r[0]: json.loads(r[1]) for r in con.execute("SELECT id, options FROM sessions")}
    finally:
        con.close()


def requests(db, sid):
    con = sqlite3.connect(db)
    try:
        return [json.loads(r[0]) for r in con.execute(
            "SELECT g.request FROM segments g JOIN sessions s ON s.sid = g.sid WHERE s.id = ? "
            "ORDER BY g.seq", (sid,))]
    finally:
        con.close()


def replay(opts, reqs):
    """The /metrics "systems" of a fresh server's session with options opts
    (langs taken out of them) after posting reqs."""
    opts = dict(opts)
    opts.pop("paired_totals", None)  # the server's own mark, set on every new session
    fields = {"id": "r", "source_lang": opts.pop("source_lang", "und"),
              "target_lang": opts.pop("target_lang", "und"), "options": opts}
    srv = Server()
    try:
        c = srv.client()
        c.create_session(**fields)
        for q in reqs:
            expect_status(c.post("/v1/sessions/r/segments", q), 201, "replay POST")
        m = c.jget("/v1/sessions/r/metrics")
        c.close()
        eq(srv.stop(), 0, "replay server exit status")
        return m["systems"]
    finally:
        srv.kill()


def check_upgraded(db, what):
    """Opens db (its sessions j and z stored as before issue 24) with this
    binary: echo, more segments, totals against replays."""
    srv = Server(db=db)
    c = srv.client()
    for sid, lang in (("j", "ja"), ("z", "zh")):
        s = c.jget("/v1/sessions/%s" % sid)
        o = s["options"]
        eq(o.get("defaults"), 1, "%s: %s echo defaults" % (what, sid))
        eq(o["tokenizer"], "zh", "%s: %s recall tokenizer that runs (the old one)" % (what, sid))
        eq(o["bleu_tokenize"], "13a", "%s: %s BLEU tokenizer that runs (the old one)" % (what, sid))
        eq(o["ter_normalized"], False, "%s: %s TER as before (not pinned then)" % (what, sid))
        check("bleu:" not in s["signature"],
              "%s: %s signature names BLEU 13a (no bleu: part): %s" % (what, sid, s["signature"]))
        post(c, sid, DATA[lang][3:], 3)
        # an edit (its replay of the history) and a rescore run the stored
        # options too
        src, hyp, _tr = DATA[lang][1]
        r = c.put("/v1/sessions/%s/segments/s1" % sid,
                  {"source": src, "hypothesis": hyp, "translation": DATA[lang][0][2]})
        expect_status(r, 200, "%s: PUT (edit) of s1 of %s" % (what, sid))
        expect_status(c.post("/v1/sessions/%s/rescore" % sid), 200, "%s: rescore %s" % (what, sid))
    metrics = {sid: c.jget("/v1/sessions/%s/metrics" % sid)["systems"] for sid in ("j", "z")}
    c.close()
    eq(srv.stop(), 0, "%s: server exit status" % what)
    opts = stored(db)
    for sid in ("j", "z"):
        eq(opts[sid].get("defaults"), 1, "%s: %s stored defaults after the migration" % (what, sid))
        reqs = requests(db, sid)
        eq(len(reqs), 6, "%s: segments of %s" % (what, sid))
        eq(metrics[sid], replay(opts[sid], reqs),
           "%s: totals of %s vs a replay under its stored options" % (what, sid))
        today = {k: v for k, v in opts[sid].items() if k != "defaults"}
        check(replay(today, reqs) != metrics[sid],
              "%s: %s replayed under today's defaults must differ (else the test proves nothing)"
              % (what, sid))


def test_crafted_old_sessions_keep_old_tokenizers():
    db = os.path.join(tmpdir("adaptmon-upgrade-"), "x.db")
    srv = Server(db=db)
    c = srv.client()
    # scored as a pre-issue-24 release scored them: old tokenizers, TER off
    old = {"defaults": 1, "ter_normalized": False, "ter_asian_support": False}
    for sid, lang in (("j", "ja"), ("z", "zh")):
        c.create_session(id=sid, source_lang="en", target_lang=lang, options=old)
        post(c, sid, DATA[lang][:3], 0)
    c.close()
    eq(srv.stop(), 0, "server exit status")
    # stored as the old release stored them: none of the three keys, and
    # migration 011 not yet applied
    con = sqlite3.connect(db)
    with con:
        for sid, o in stored(db).items():
            for k in old:
                o.pop(k, None)
            con.execute("UPDATE sessions SET options = ? WHERE id = ?", (json.dumps(o), sid))
        eq(con.execute("DELETE FROM schema_migrations WHERE version = 11").rowcount, 1,
           "migration 011 row removed")
        # and what the later migrations added (they run again after 011): 012's columns,
        con.execute("DELETE FROM schema_migrations WHERE version > 11")
        for col in ("tokenizer", "lang", "source_lang"):
            con.execute("ALTER TABLE vocabularies DROP COLUMN " + col)
        con.execute("ALTER TABLE segments DROP COLUMN stats")  # and 013's
        con.execute("ALTER TABLE segment_results DROP COLUMN stats")  # and 014's
        con.execute("ALTER TABLE sessions DROP COLUMN gv_floor")  # and 015's
    con.close()
    check_upgraded(db, "crafted")


def test_new_session_pins_current_defaults():
    db = os.path.join(tmpdir("adaptmon-upgrade-"), "x.db")
    srv = Server(db=db)
    c = srv.client()
    s = c.create_session(id="n", source_lang="en", target_lang="ja")
    eq(s["options"]["defaults"], 3, "new session echo defaults")
    eq(s["options"]["tokenizer"], "ja-mecab", "new ja session recall tokenizer")
    eq(s["options"]["bleu_tokenize"], "ja-mecab", "new ja session BLEU tokenizer")
    z = c.create_session(id="nz", source_lang="en", target_lang="zh")
    eq(z["options"]["defaults"], 3, "new zh session echo defaults")
    eq(z["options"]["tokenizer"], "zh-friso", "new zh session recall tokenizer")
    eq(z["options"]["bleu_tokenize"], "zh", "new zh session BLEU tokenizer (sacreBLEU's)")
    check("|tok:zh-friso-1.6.4|" in z["signature"], "zh signature names friso: " + z["signature"])
    r = c.post("/v1/sessions", {"id": "bad", "source_lang": "en", "target_lang": "ja",
                                "options": {"defaults": 4}})
    expect_status(r, 422, "defaults 4 refused")
    r = c.post("/v1/sessions", {"id": "bad", "source_lang": "en", "target_lang": "zh",
                                "options": {"bleu_tokenize": "zh-friso"}})
    expect_status(r, 422, "BLEU refuses zh-friso")
    c.close()
    eq(srv.stop(), 0, "server exit status")
    eq(stored(db)["n"].get("defaults"), 3, "defaults stored with the new session")
    eq(stored(db)["nz"].get("defaults"), 3, "defaults stored with the new zh session")


def test_defaults2_zh_keeps_characters():
    db = os.path.join(tmpdir("adaptmon-upgrade-"), "x.db")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="z", source_lang="en", target_lang="zh", options={"defaults": 2})
    post(c, "z", ZH[:3], 0)
    c.close()
    eq(srv.stop(), 0, "server exit status")
    srv = Server(db=db)  # a restart: the runtime is rebuilt from the store
    c = srv.client()
    s = c.jget("/v1/sessions/z")
    eq(s["options"]["defaults"], 2, "defaults-2 session echo defaults")
    eq(s["options"]["tokenizer"], "zh", "defaults-2 zh session keeps the character rule")
    check("|tok:zh|" in s["signature"], "signature names zh: " + s["signature"])
    post(c, "z", ZH[3:], 3)
    metrics = c.jget("/v1/sessions/z/metrics")["systems"]
    c.close()
    eq(srv.stop(), 0, "server exit status")
    opts = stored(db)["z"]
    eq(opts.get("defaults"), 2, "stored defaults")
    reqs = requests(db, "z")
    eq(metrics, replay(opts, reqs), "totals vs a replay under the stored options")
    today = {k: v for k, v in opts.items() if k != "defaults"}
    check(replay(today, reqs) != metrics,
          "replayed under today's defaults (zh-friso) must differ (else the test proves nothing)")


def test_old_binary_database():
    if not OLD_BIN or not os.access(OLD_BIN, os.X_OK):
        raise Skip("ADAPTMON_OLD_BIN (an adaptmon built from 5a30b6b) not given; "
                   "test_crafted_old_sessions_keep_old_tokenizers covers the same")
    db = os.path.join(tmpdir("adaptmon-upgrade-"), "x.db")
    saved = harness.ADAPTMON
    harness.ADAPTMON = OLD_BIN
    try:
        srv = Server(db=db)
        c = srv.client()
        for sid, lang in (("j", "ja"), ("z", "zh")):
            c.create_session(id=sid, source_lang="en", target_lang=lang)
            post(c, sid, DATA[lang][:3], 0)
        c.close()
        eq(srv.stop(), 0, "old server exit status")
    finally:
        harness.ADAPTMON = saved
    check_upgraded(db, "old binary")


if __name__ == "__main__":
    run_tests(globals())

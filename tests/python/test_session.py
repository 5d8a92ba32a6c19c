#!/usr/bin/env python3
"""adaptmon.Session: the incremental session of the extension.

* every add equals `adaptmon score --json --per-segment` on the segments so
  far (the whole-history path the Session used before: the JSON number for
  number, the new segment's object included);
* n adds take time linear in n (the last 500 of 2,000 adds cost less than
  twice the first 500: the whole-history path costs ~7 times more);
* replace and delete equal the live service's PUT and DELETE of a segment
  (the server's answers for the same requests) and a fresh session of the
  edited list; bad input leaves the session unchanged;
* options a session cannot honour, and bad ones, raise the CLI's message.

Builds the extension in place first (as test_core.py). Ends with
"N passed, N failed".
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
from harness import (DATA, ROOT, base, check, eq, run_tests, serve, shutdown,  # noqa: E402
                     tico19)

PYDIR = os.path.join(ROOT, "python")
GLOSSARY = os.path.join(DATA, "glossaries", "tico19", "f_en-fr_XX.csv")

am = None  # the adaptmon module, imported by setup()


def setup():
    global am
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=PYDIR,
                   check=True, stdout=subprocess.DEVNULL)
    sys.path.insert(0, PYDIR)
    import adaptmon
    am = adaptmon


def two_systems(segs):
    """TICO-19 segments with a second system (the hypothesis reversed word
    by word, so that the two differ everywhere)."""
    return [dict(s, hyps={"fairseq": s["hypothesis"],
                          "rev": " ".join(reversed(s["hypothesis"].split()))}) for s in segs]


def whole(segs, **opts):
    """The whole-history path: corpus_score of the list, per segment."""
    return am.corpus_score({k: [s["hyps"][k] for s in segs] for k in segs[0]["hyps"]},
                           [s["translation"] for s in segs], [s["source"] for s in segs],
                           per_segment=True, **opts)


def without_per_segment(d):
    return {k: v for k, v in d.items() if k != "per_segment"}


def test_every_add_equals_the_whole_history_cli():
    """After each of 40 adds (two systems, a glossary, R1 and terms in
    play): the answer is the CLI's JSON on those segments, number for
    number, and the segment is the CLI's last per-segment object."""
    segs = two_systems(tico19()[:40])
    opts = dict(target_lang="fr", glossary=GLOSSARY, source_lang="en")
    sess = am.Session(systems=["fairseq", "rev"], **opts)
    for n, s in enumerate(segs, 1):
        got = sess.add(s["source"], s["translation"], s["hyps"])
        want = whole(segs[:n], **opts)
        eq(got["segment"], want.per_segment[-1], "segment %d" % n)
        eq(without_per_segment(sess.last.json), without_per_segment(want.json), "JSON after %d" % n)
        eq({k: v.raw for k, v in got["totals"].items()},
           {k: v.raw for k, v in want.systems.items()}, "totals after %d" % n)
    check(want.systems["fairseq"].terms["instances"] > 0, "glossary terms were found")
    check(want.systems["fairseq"].r1.hits > 0, "R1 hits (the history matters)")
    eq(len(sess), 40, "length")


def test_adds_take_linear_time():
    """2,000 adds of a growing vocabulary: the last 500 take less than twice
    the time of the first 500 (CPU time of this process: other programs on
    the machine do not count). Re-scoring the history on each add, as the
    Session did before, gives a ratio near 7."""
    sess = am.Session(target_lang="fr", stopwords="none")
    times = []
    for i in range(2000):
        words = " ".join("mot%d" % ((i * 7 + k) % (i + 50)) for k in range(12))
        t0 = time.process_time()
        sess.add("w", words, words[::-1])
        times.append(time.process_time() - t0)
    first, last = sum(times[:500]), sum(times[-500:])
    check(last < 2 * first, "last 500 adds %.3fs, first 500 %.3fs" % (last, first))
    eq(sess.last.segments, 2000, "segments in the answer")


def _fresh(segs, opts):
    """A new session fed segs: its last answer's JSON (without per_segment)."""
    s = am.Session(systems=["fairseq", "rev"], **opts)
    for x in segs:
        s.add(x["source"], x["translation"], x["hyps"])
    return without_per_segment(s.last.json)


def test_replace_and_delete_equal_a_fresh_session():
    """replace(i) and delete(i) leave the session as a fresh one of the
    edited list (the CLI on that list), and the replaced segment's answer
    is its object in that list."""
    segs = two_systems(tico19()[:12])
    opts = dict(target_lang="fr", glossary=GLOSSARY, source_lang="en")
    sess = am.Session(systems=["fairseq", "rev"], **opts)
    for s in segs:
        sess.add(s["source"], s["translation"], s["hyps"])
    new = dict(segs[3], translation=segs[3]["translation"] + " covid", source=segs[5]["source"])
    got = sess.replace(3, new["source"], new["translation"], new["hyps"])
    edited = segs[:3] + [new] + segs[4:]
    want = whole(edited, **opts)
    eq(got["segment"], want.per_segment[3], "the replaced segment's answer")
    eq(without_per_segment(sess.last.json), without_per_segment(want.json), "after replace")
    got = sess.delete(-2)
    edited = edited[:-2] + edited[-1:]
    eq({k: v.raw for k, v in got["totals"].items()},
       {k: v.raw for k, v in whole(edited, **opts).systems.items()}, "after delete")
    eq(without_per_segment(sess.last.json), _fresh(edited, opts), "delete = fresh session")
    eq(len(sess), 11, "length after delete")
    # a bad replacement changes nothing
    before = json.dumps(sess.last.json)
    for bad in [lambda: sess.replace(2, "x", "y\x00z", new["hyps"]),
                lambda: sess.replace(2, "x", "y", {"fairseq": "a"}),
                lambda: sess.replace(99, "x", "y", new["hyps"])]:
        try:
            bad()
            check(False, "a bad replacement was accepted")
        except (ValueError, IndexError):
            pass
        eq(json.dumps(sess.last.json), before, "unchanged after a bad replacement")
        eq(len(sess), 11, "length unchanged")
    nxt = sess.add(segs[0]["source"], segs[0]["translation"], segs[0]["hyps"])
    eq(nxt["segment"]["id"], "12", "ids are positions")
    eq(without_per_segment(sess.last.json), _fresh(edited + [segs[0]], opts), "then an add")


def test_replace_and_delete_equal_the_live_service():
    """The same POSTs, a PUT of segment 4 and a DELETE of segment 7 to a
    server and to a Session: the server's totals after each equal the
    Session's (R0/R1/R0+1 counts, BLEU, chrF, chrF++, TER, terms)."""
    segs = tico19()[:10]
    sess = am.Session(target_lang="fr", glossary=GLOSSARY, source_lang="en")
    server, c = serve()

    def same(got, live, what):
        for key in ("r0", "r1", "r01"):
            eq([getattr(got, key).hits, getattr(got, key).total],
               [live[key]["hits"], live[key]["total"]], "%s %s" % (key, what))
        for key in ("bleu", "chrf", "chrfpp", "ter"):
            eq(getattr(got, key), live[key], "%s %s" % (key, what))
        eq(got.terms.get("instances"), live["terms"]["instances"], "terms " + what)

    def live_totals():
        r = c.get(base("py2") + "/metrics")
        eq(r.status, 200, "GET metrics")
        return r.json()["systems"]["hyp"]

    try:
        c.create_session(id="py2", source_lang="en", target_lang="fr")
        with open(GLOSSARY, "rb") as f:
            eq(c.put(base("py2") + "/glossary", f.read(), ctype="text/csv").status, 200, "glossary")
        for s in segs:
            sess.add(s["source"], s["translation"], s["hypothesis"])
            r = c.post(base("py2") + "/segments", {
                "id": s["id"], "source": s["source"], "translation": s["translation"],
                "hypotheses": {"hyp": s["hypothesis"]}})
            eq(r.status, 201, "POST " + s["id"])
        s = segs[3]
        new = {"source": s["source"], "translation": segs[8]["translation"],
               "hypotheses": {"hyp": s["hypothesis"]}}
        got = sess.replace(3, new["source"], new["translation"], new["hypotheses"])
        r = c.put(base("py2") + "/segments/" + s["id"], dict(new, id=s["id"]))
        eq(r.status, 200, "PUT")
        same(got["totals"]["hyp"], live_totals(), "after the PUT")
        got = sess.delete(6)
        eq(c.delete(base("py2") + "/segments/" + segs[6]["id"]).status, 204, "DELETE")
        same(got["totals"]["hyp"], live_totals(), "after the DELETE")
    finally:
        shutdown(server, c)


def test_session_options_errors_carry_the_cli_message():
    """Bad options raise AdaptmonError with the CLI's message when the
    session is made; options for a whole run are refused."""
    cases = [({"k_max": 99}, "k-max"),
             ({"glossary": "/nonexistent/g.csv"}, "cannot open '/nonexistent/g.csv'"),
             ({"paired_bs": True}, "significance"),
             ({"ref": "x"}, "input files")]
    for opts, want in cases:
        try:
            am.Session(target_lang="fr", systems=["a"], **opts)
            check(False, "%r accepted" % opts)
        except am.AdaptmonError as e:
            check(want in str(e), "%r: %s" % (opts, e))
    sess = am.Session(systems=["a", "b"])
    check(any("no --target-lang" in w for w in sess.warnings), "warning kept: %s" % sess.warnings)
    try:
        sess.add("s", "t", {"a": "x"})
        check(False, "a missing system accepted")
    except ValueError as e:
        check("systems" in str(e), str(e))
    eq(len(sess), 0, "nothing added")


def test_sessions_on_threads_equal_sequential():
    """Two sessions fed on two threads at once give what they give one
    after the other (each has its own history; the GIL is released)."""
    import threading
    segs = tico19()[:60]
    halves = [segs[:30], segs[30:]]

    def feed(part, out):
        s = am.Session(target_lang="fr")
        for x in part:
            s.add(x["source"], x["translation"], x["hypothesis"])
        out.append(without_per_segment(s.last.json))

    seq = []
    for h in halves:
        feed(h, seq)
    par = [[], []]
    ts = [threading.Thread(target=feed, args=(h, par[i])) for i, h in enumerate(halves)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    eq([p[0] for p in par], seq, "threads")



def test_one_session_shared_by_threads_counts_every_add():
    """Four threads adding to one session: its lock serializes the adds
    (none lost, the history whole): 4 × 25 segments counted, and the
    BLEU statistics are those of the 100 segments (the recall counts
    depend on the order the threads got, BLEU's statistics do not)."""
    import threading
    segs = tico19()[:100]
    sess = am.Session(target_lang="fr")

    def feed(part):
        for x in part:
            sess.add(x["source"], x["translation"], x["hypothesis"])

    ts = [threading.Thread(target=feed, args=(segs[i::4],)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    eq(len(sess), 100, "adds counted")
    eq(sess.last.segments, 100, "segments in the answer")
    want = whole([dict(x, hyps={"hyp": x["hypothesis"]}) for x in segs], target_lang="fr")
    eq(sess.last.systems["hyp"].raw["bleu_stats"]["counts"],
       want.systems["hyp"].raw["bleu_stats"]["counts"], "BLEU statistics of all 100")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup=setup))

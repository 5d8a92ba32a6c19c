"""What the store's suites with adaptmon nodes on one throwaway PostgreSQL
share (test_pg_nodes, test_pg_committers, test_pg_rewrites): the skip when
PostgreSQL's server binaries are absent, the one PostgreSQL of a suite (pg(),
stopped by teardown()), sample segments, a session's whole timeline, the
retrying POST every client must do, and the serial replay the suites compare
totals with. Importing it puts tests/ and tests/api/ on sys.path."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))

import pgutil  # noqa: E402


def skip_without_postgres():
    """Ends the suite as skipped (exit 0, saying why) without PostgreSQL."""
    if not pgutil.bindir():
        print("skip: PostgreSQL server binaries not found (tools/deps.sh installs postgresql-15)")
        print("0 passed, 0 failed")
        sys.exit(0)


skip_without_postgres()

import harness  # noqa: E402
from harness import Server, base, check, expect_status, timeline  # noqa: E402,F401

_PG = []


def pg():
    """The suite's PostgreSQL (pgutil.Server), started at the first call."""
    if not _PG:
        _PG.append(pgutil.Server())
    return _PG[0]


def teardown():
    """Stops the suite's PostgreSQL if it was started (run_tests' teardown)."""
    if _PG:
        _PG[0].stop()


TEXTS = [
    ("The patient has a fever.", "Le patient a de la fièvre.", "Le patient a une fièvre."),
    ("Wash your hands often.", "Lavez vos mains souvent.", "Lavez-vous souvent les mains."),
    ("Stay at home if you are sick.", "Restez à la maison si vous êtes malade.",
     "Restez chez vous si vous êtes malade."),
    ("The virus spreads quickly.", "Le virus se propage rapidement.",
     "Le virus se répand rapidement."),
    ("Wear a mask in public.", "Portez un masque en public.", "Portez un masque en public."),
]


def seg(i, edit=0):
    """Segment i of a sample session; edit > 0: another text for the same i
    (what a PUT replaces it with)."""
    src, hyp, ref = TEXTS[(i + edit) % len(TEXTS)]
    return {"source": "%s (%d)" % (src, i), "hypothesis": "%s (%d)" % (hyp, i),
            "translation": "%s (%d)" % (ref, i)}


def post_retry(c, sid, body, tries=100):
    """POSTs until stored (201) or found stored (200); 409/503 are retried
    with the same id and body, as clients must."""
    for _ in range(tries):
        r = c.post(base(sid) + "/segments", body)
        if r.status in (200, 201):
            return r
        check(r.status in (409, 503), "POST %s: status %d %r" % (body["id"], r.status, r.body))
    raise AssertionError("POST %s never stored" % body["id"])


def serial_replay(logs):
    """{session: its metrics' systems} after each final log ({session: the
    rows of its timeline}) is posted one by one into a fresh SQLite server."""
    s = Server()
    c = s.client()
    out = {}
    for sid, log in sorted(logs.items()):
        c.create_session(id=sid, source_lang="en", target_lang="fr")
        for row in log:
            req = row["request"]
            body = {"id": row["id"], "source": req["source"], "hypothesis": req["hypothesis"],
                    "translation": req["translation"]}
            expect_status(c.post(base(sid) + "/segments", body), 201, "replay " + row["id"])
        out[sid] = c.jget(base(sid) + "/metrics")["systems"]
    harness.shutdown(s, c)
    return out


def post_batch_retry(c, sid, bodies, tries=200):
    """POSTs bodies as one batch (an array) until every item is stored
    (201) or found stored (200): an item that failed with 409/503 (the
    session changed on another node, or another node holds it) and the
    items after it, which were not attempted, are posted again as the
    next batch, with the same ids and bodies, as clients must. Returns how
    many batch requests it took."""
    pending = list(bodies)
    for n in range(1, tries + 1):
        r = c.request("POST", base(sid) + "/segments", json.dumps(pending).encode(),
                      ctype="application/json")
        if r.status == 503:  # the whole request refused (e.g. the session is busy)
            continue
        check(r.status == 200, "batch of %d: status %d %r" % (len(pending), r.status, r.body[:300]))
        items = r.json()["items"]
        check(len(items) == len(pending), "one answer per item")
        done = 0
        while done < len(items) and items[done]["status"] in (200, 201):
            done += 1
        if done == len(items):
            return n
        check(items[done]["status"] in (409, 503),
              "batch item %s: status %r %r" % (pending[done]["id"], items[done]["status"],
                                               items[done].get("problem")))
        pending = pending[done:]
    raise AssertionError("batch never stored (%d items left)" % len(pending))

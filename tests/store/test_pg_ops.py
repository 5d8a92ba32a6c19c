"""PostgreSQL operations (issue 28 items 3 and 5; DESIGN-postgres.md §2.9):
what an adaptmon node shows of its cluster, and what it refuses.

Starts a real primary with two streaming standbys (tests/ha/pgcluster.py:
loopback, run as "nobody", synchronous_standby_names 'ANY 1 (n0, n1, n2)')
and adaptmon serve on it with --pg-require-sync on (the default), then:

* test_a_standby_that_never_streams: n2's primary_conninfo is pointed at a
  port where nothing listens (an old primary rejoined with a wrong
  conninfo, or a WAL receiver that never starts). /readyz stays 200 (n1
  still takes the synchronous copies, writes are acknowledged) but says
  "degraded" and names n2; /metrics has adaptmon_pg_standbys_streaming 1,
  _expected 2, adaptmon_pg_degraded 1. Pointed back, it streams again and
  both clear.
* test_every_write_refused_without_sync_standby: n1 stopped as well, every
  write route (session create/delete, glossary put/delete, segment
  post/batch/put/delete, import, rescore, vocabulary put/delete) answers
  503 with Retry-After and changes nothing; reads still answer; once n1 is
  back every route works again. A node started meanwhile on a new database
  (migrations to commit) fails at once saying why, instead of hanging in
  the commit's wait, and starts once a standby streams.
* test_expect_standbys_option: --pg-expect-standbys 3 with two standbys
  streaming is degraded ("2 of 3").
* test_password_never_shown: a --db URI with a password in its user
  information and its query, and a key=value string with a quoted one: the
  password is in no log line, /readyz or /metrics answer, error or start-up
  failure message.

Prints "N passed, N failed"; exits 1 on a failure. Skips (exit 0, saying
why) when PostgreSQL's binaries are absent or the suite does not run as root
(pgcluster runs the servers as "nobody").
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "api"))
sys.path.insert(0, os.path.join(TESTS, "ha"))

import pgcluster  # noqa: E402

WHY = pgcluster.available()
if WHY:
    print("skip: " + WHY)
    print("0 passed, 0 failed")
    sys.exit(0)

import harness  # noqa: E402
from harness import Server, base, eq, check, expect_status, run_tests  # noqa: E402

ROOT = os.path.dirname(TESTS)
CL = []
SECRET = "Sup3r-S3cret-pw"


def cluster():
    if not CL:
        CL.append(pgcluster.Cluster(standbys=2, sync="ANY 1"))
    return CL[0]


def db_url(db="postgres"):
    p = cluster().primary
    return "postgresql://am@127.0.0.1:%d/%s" % (p.port, db)


def create_db(name):
    cl = cluster()
    cl.psql(cl.primary, 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
    check(cl.psql(cl.primary, 'CREATE DATABASE "%s"' % name) is not None, "CREATE DATABASE")
    return db_url(name)


class Nowhere:
    """A node-like target for pgcluster._point: a port nothing listens on."""
    port = pgcluster.free_port()


def wait_for(fn, what, timeout=30):
    """Polls fn() until it returns a true value; returns it, else fails."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError("timed out waiting for %s (last %r)" % (what, last))


def readyz(c):
    r = c.get("/readyz")
    expect_status(r, 200, "/readyz")
    return r.json()


def gauges(c):
    """/metrics' adaptmon_pg_* samples as {name: float}."""
    r = c.get("/metrics")
    expect_status(r, 200, "/metrics")
    out = {}
    for line in r.text.splitlines():
        if line.startswith("adaptmon_pg_"):
            name, value = line.split()
            out[name] = float(value)
    return out


def healthy(c, streaming):
    j = readyz(c)
    pg = j.get("postgres", {})
    return pg.get("standbys_streaming") == streaming and "degraded" not in j and \
        pg.get("writes") == "accepted" and j


SEG = {"source": "The patient has a fever.", "hypothesis": "Le patient a de la fièvre.",
       "translation": "Le patient a une fièvre."}


def test_a_standby_that_never_streams():
    cl = cluster()
    n2 = cl.nodes[2]
    s = Server(db=create_db("never"))
    c = s.client()
    try:
        j = wait_for(lambda: healthy(c, 2), "both standbys streaming")
        eq(j["postgres"]["standbys_expected"], 2, "expected: the names of 'ANY 1 (n0, n1, n2)' "
           "but the primary's own")
        eq(j["postgres"]["not_streaming"], [], "none missing")
        check(j["postgres"]["sync_standbys"] >= 1, "a synchronous standby: %r" % j)
        check(j["postgres"].get("replay_lag_bytes", -1) >= 0, "replay lag shown: %r" % j)
        g = gauges(c)
        eq(g.get("adaptmon_pg_standbys_streaming"), 2.0, "gauge streaming")
        eq(g.get("adaptmon_pg_standbys_expected"), 2.0, "gauge expected")
        eq(g.get("adaptmon_pg_degraded"), 0.0, "gauge degraded")
        eq(g.get("adaptmon_pg_writes_accepted"), 1.0, "gauge writes accepted")
        check("adaptmon_pg_replay_lag_bytes" in g, "lag gauge: %r" % g)

        cl._point(n2, Nowhere)  # its WAL receiver restarts and never connects
        j = wait_for(lambda: (lambda x: "degraded" in x and x)(readyz(c)), "degraded")
        check("n2" in j["degraded"] and "1 of 2" in j["degraded"], "names n2: %r" % j)
        eq(j["postgres"]["not_streaming"], ["n2"], "not_streaming")
        eq(j["postgres"]["writes"], "accepted", "n1 still takes the synchronous copy")
        g = gauges(c)
        eq(g.get("adaptmon_pg_standbys_streaming"), 1.0, "gauge streaming while degraded")
        eq(g.get("adaptmon_pg_standbys_expected"), 2.0, "gauge expected while degraded")
        eq(g.get("adaptmon_pg_degraded"), 1.0, "gauge degraded")
        c.create_session(id="d", source_lang="en", target_lang="fr")
        expect_status(c.post(base("d") + "/segments", dict(SEG, id="1")), 201,
                      "writes acknowledged while degraded")
        check("PostgreSQL degraded" in s.logs(20000) and "n2" in s.logs(20000),
              "the change is logged once: %s" % s.logs(2000))

        cl._point(n2, cl.primary)
        wait_for(lambda: healthy(c, 2), "n2 streaming again")
        eq(gauges(c).get("adaptmon_pg_degraded"), 0.0, "gauge degraded cleared")
    finally:
        cl._point(n2, cl.primary)
        harness.shutdown(s, c)


def write_routes(c):
    """Every write route of the API, as (what, response) pairs, on session
    "w" (segment "1" stored, glossary and vocabulary "v" set)."""
    with open(os.path.join(ROOT, "tests", "data", "xliff", "omegat.xlf"), "rb") as f:
        xlf = f.read()
    return [
        ("POST /v1/sessions", lambda: c.post("/v1/sessions", {
            "id": "new", "source_lang": "en", "target_lang": "fr"})),
        ("POST segment", lambda: c.post(base("w") + "/segments", dict(SEG, id="2"))),
        ("POST batch", lambda: c.post(base("w") + "/segments", [dict(SEG, id="3")])),
        ("PUT segment", lambda: c.put(base("w") + "/segments/1",
                                      dict(SEG, translation="Le patient est fiévreux."))),
        ("DELETE segment", lambda: c.delete(base("w") + "/segments/1")),
        ("PUT glossary", lambda: c.put(base("w") + "/glossary",
                                       [{"source": "fever", "target": "fièvre"}])),
        ("DELETE glossary", lambda: c.delete(base("w") + "/glossary")),
        ("POST import", lambda: c.post(base("w") + "/import", xlf,
                                       ctype="application/xliff+xml")),
        ("POST rescore", lambda: c.post(base("w") + "/rescore")),
        ("PUT vocabulary", lambda: c.put("/v1/vocabularies/v2", "3 a\n", ctype="text/plain")),
        ("DELETE vocabulary", lambda: c.delete("/v1/vocabularies/v")),
        ("DELETE session", lambda: c.delete(base("w"))),
    ]


def _sql(cl, db, sql):
    """sql's output (psql -At) on the primary's database db; fails on an error."""
    p = subprocess.run([os.path.join(pgcluster.PG_BIN, "psql"), "-X", "-q", "-At", "-v",
                        "ON_ERROR_STOP=1", "-d", cl.primary.dsn(db), "-c", sql],
                       capture_output=True, text=True, timeout=20)
    check(p.returncode == 0, "psql: %s" % p.stderr)
    return p.stdout


def _state(cl, db):
    """What the database holds, for 'changes nothing'."""
    return _sql(cl, db, "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM segments), "
                        "(SELECT count(*) FROM vocabularies), "
                        "(SELECT string_agg(t::text, ';' ORDER BY t::text) FROM sessions t)")


def test_every_write_refused_without_sync_standby():
    cl = cluster()
    n1, n2 = cl.nodes[1], cl.nodes[2]
    s = Server(db=create_db("refuse"))
    c = s.client()
    try:
        wait_for(lambda: healthy(c, 2), "both standbys streaming")
        c.create_session(id="w", source_lang="en", target_lang="fr")
        expect_status(c.post(base("w") + "/segments", dict(SEG, id="1")), 201, "segment 1")
        expect_status(c.put(base("w") + "/glossary", [{"source": "patient", "target": "patient"}]),
                      200, "glossary")
        expect_status(c.put("/v1/vocabularies/v", "3 a\n", ctype="text/plain"), (200, 201),
                      "vocabulary")
        c.create_session(id="h", source_lang="en", target_lang="fr")
        expect_status(c.post(base("h") + "/segments", dict(SEG, id="1")), 201, "segment of h")
        before = _state(cl, "refuse")
        fresh = create_db("fresh")  # CREATE DATABASE commits: while standbys stream

        cl._point(n2, Nowhere)
        cl.stop(n1)
        j = wait_for(lambda: (lambda x: x["postgres"]["writes"] == "refused" and x)(readyz(c)),
                     "writes refused")
        check("503" in j.get("degraded", ""), "/readyz says writes answer 503: %r" % j)
        eq(gauges(c).get("adaptmon_pg_writes_accepted"), 0.0, "gauge writes refused")
        for what, call in write_routes(c):
            r = call()
            if what == "POST batch" and r.status == 200:  # a batch reports per item
                item = r.json()["items"][0]
                eq(item["status"], 503, what + " item status (%r)" % r.body[:300])
                eq(item["problem"]["type"], harness.PROBLEM_BASE + "unavailable", what + " type")
            else:
                harness.expect_problem(r, 503, "unavailable", what)
                eq(r.header("Retry-After"), "1", what + " Retry-After")
        eq(_state(cl, "refuse"), before, "no refused write changed the database")
        expect_status(c.get(base("w")), 200, "reads still answer")
        expect_status(c.get(base("w") + "/metrics"), 200, "metrics still answer")

        # the purge at start-up: a session a crash left half deleted (hidden,
        # '~' id; written here with a local commit) is not purged by a node
        # started now (its commit would have no second copy, or wait for
        # ever), and the node starts; a start with a standby purges it
        _sql(cl, "refuse", "SET synchronous_commit = local; "
                           "UPDATE sessions SET id = '~h' WHERE id = 'h'")
        hidden = _state(cl, "refuse")
        s2 = Server(db=db_url("refuse"))
        check("purged at a later start" in s2.logs(), "the deferral is logged: %s" % s2.logs())
        harness.shutdown(s2)
        eq(_state(cl, "refuse"), hidden, "nothing purged without a synchronous standby")

        # a start that must migrate (a new database) fails at once and says
        # why: the migration's commit would wait for ever for a standby
        try:
            s2 = Server(db=fresh, ready_timeout=20)
            harness.shutdown(s2)
            raise AssertionError("a node migrated a new database without a synchronous standby")
        except AssertionError as e:
            msg = str(e)
            check("did not start" in msg and "no synchronous standby streams" in msg,
                  "the start fails saying why: %s" % msg[:1500])
        eq(_sql(cl, "fresh", "SELECT to_regclass('sessions') IS NULL"), "t\n",
           "nothing of the schema was committed")

        cl._point(n2, cl.primary)
        cl.start(n1)
        wait_for(lambda: healthy(c, 2), "writes accepted again")
        s2 = Server(db=fresh)
        expect_status(s2.client().get("/readyz"), 200, "the new database migrated with a standby")
        harness.shutdown(s2)
        s2 = Server(db=db_url("refuse"))
        harness.shutdown(s2)
        eq(_sql(cl, "refuse", "SELECT count(*) FROM sessions WHERE id = '~h'"), "0\n",
           "the start with a synchronous standby purged the hidden session")
        for what, call in write_routes(c):
            r = call()
            check(r.status in (200, 201, 204), "%s after the standbys are back: %d %r" % (
                what, r.status, r.body[:300]))
    finally:
        cl._point(n2, cl.primary)
        if not n1.pid():
            cl.start(n1)
        harness.shutdown(s, c)


def test_expect_standbys_option():
    s = Server("--pg-expect-standbys", "3", db=create_db("expect"))
    c = s.client()
    try:
        j = wait_for(lambda: (lambda x: x["postgres"]["standbys_streaming"] == 2 and x)(
            readyz(c)), "two streaming")
        eq(j["postgres"]["standbys_expected"], 3, "the option wins")
        check("2 of 3" in j.get("degraded", ""), "degraded: %r" % j)
        eq(gauges(c).get("adaptmon_pg_degraded"), 1.0, "gauge degraded")
    finally:
        harness.shutdown(s, c)


def no_secret(text, what):
    check(SECRET not in text, "%s shows the password: %r" % (what, text[:2000]))


def test_password_never_shown():
    cl = cluster()
    create_db("pw")
    p = cl.primary
    forms = [
        "postgresql://am:%s@127.0.0.1:%d/pw?password=%s" % (SECRET, p.port, SECRET),
        "host=127.0.0.1 port=%d user=am dbname=pw password='%s'" % (p.port, SECRET),
    ]
    for i, db in enumerate(forms):
        s = Server("--log-level", "debug", db=db)
        c = s.client()
        try:
            wait_for(lambda: healthy(c, 2), "ready")
            for path in ("/readyz", "/metrics", "/healthz"):
                no_secret(c.get(path).text, path)
            c.create_session(id="s%d" % i, source_lang="en", target_lang="fr")
            no_secret(c.get("/v1/sessions/nope").text, "a 404")
        finally:
            harness.shutdown(s, c)
        logs = s.logs(200000)
        check("***" in logs, "the start-up line shows the redacted --db: %s" % logs[:1500])
        no_secret(logs, "the logs")
    # libpq refuses these: the start fails and says why, without the password
    bad = ["postgresql://am:%s@127.0.0.1:%d/pw?password=%s&bogus=1" % (SECRET, p.port, SECRET),
           "host=127.0.0.1 port=%d password %s" % (p.port, SECRET),
           "postgresql://am:%s@127.0.0.1:%d/pw?password=%%zz%s" % (SECRET, p.port, SECRET)]
    for db in bad:
        try:
            s = Server(db=db, ready_timeout=5)
            harness.shutdown(s)
            raise AssertionError("started with %r" % db)
        except AssertionError as e:
            msg = str(e)
            check("did not start" in msg, "refused: %s" % msg[:500])
            # its first line is the harness's own (the command line, --db and all)
            no_secret(msg.split("\n", 1)[-1], "the failure's output")


def teardown():
    if CL:
        CL[0].close()


if __name__ == "__main__":
    sys.exit(run_tests(globals(), teardown=teardown))

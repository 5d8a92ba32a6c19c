#!/usr/bin/env python3
"""Black-box tests of the adaptmon HTTP service (`adaptmon serve`).

Each run starts its own servers on free 127.0.0.1 ports with temporary
databases and stops them with SIGTERM. Expected numbers come from the data
files (data/golden/*.json) or from a second, independent path through the
service (a fresh replay, a single-system session, `adaptmon score`); none is
copied into this file except the worked example of docs/metrics.md (the paper's
slides). Python standard library only; node validates openapi.yaml.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset.
"""
import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unicodedata
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (ADAPTMON, DATA, PROBLEM_BASE, ROOT, SGM_HYP, SGM_REF, SGM_SRC,  # noqa: E402
                     TICO_GLOSSARY, Client, Server, base, check, count, eq, expect_problem,
                     expect_status, golden, run_tests, serve, shutdown, tico19, timeline, tmpdir)

S = None      # the main server (no authentication, default limits)
C = None      # a client of S

SIMIANER = {"profile": "simianer2019", "stopwords": "iso"}

# The worked example of docs/metrics.md §2 (Simianer et al.'s slides), stopwords "the".
SLIDES = [
    {"id": "1", "source": "Der Terrier beißt die Frau", "hypothesis": "The dog bites the lady",
     "translation": "The terrier bites the woman"},
    {"id": "2", "source": "Der Mann beißt den Terrier", "hypothesis": "The terrier bites the man",
     "translation": "The man bites the terrier"},
]


def setup():
    global S, C
    S, C = serve()


def teardown():
    shutdown(S, C)


# ---- helpers -------------------------------------------------------------------

def post_seg(c, sid, seg, status=201):
    r = c.post(base(sid) + "/segments", seg)
    expect_status(r, status, "POST segment %s" % seg.get("id"))
    return r.json()


def post_all(c, sid, segs, system=None):
    """Posts segments in order; system=None sends `hypothesis`, else
    `hypotheses: {system: …}`. Returns the results."""
    out = []
    for s in segs:
        body = {"id": s["id"], "source": s["source"], "translation": s["translation"]}
        if system is None:
            body["hypothesis"] = s["hypothesis"]
        else:
            body["hypotheses"] = {system: s["hypothesis"]}
        out.append(post_seg(c, sid, body))
    return out


def metrics(c, sid):
    return c.jget(base(sid) + "/metrics")


def snapshot(c, sid):
    """Everything observable about a session (to prove a failed request changed nothing)."""
    return (c.jget(base(sid)), metrics(c, sid), timeline(c, sid),
            c.jget(base(sid) + "/glossary"))


def same_snapshot(c, sid, before, what):
    after = snapshot(c, sid)
    for name, a, b in zip(("session", "metrics", "timeline", "glossary"), before, after):
        if a != b:
            raise AssertionError("%s changed the %s of session %s:\nbefore %s\nafter  %s"
                                 % (what, name, sid, json.dumps(a)[:800], json.dumps(b)[:800]))


def session_total(c):
    return c.jget("/v1/sessions?limit=1")["total"]


def close_json(a, b, path="", rel=1e-12):
    """Deep equality with a relative tolerance on non-integer numbers."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            raise AssertionError("%s: keys differ: %s vs %s" % (path, sorted(a), sorted(b)))
        for k in a:
            close_json(a[k], b[k], path + "." + k, rel)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            raise AssertionError("%s: lengths %d vs %d" % (path, len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            close_json(x, y, "%s[%d]" % (path, i), rel)
    elif isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)):
            raise AssertionError("%s: %r vs %r" % (path, a, b))
    elif a != b:
        raise AssertionError("%s: %r vs %r" % (path, a, b))


def slides_session(c, sid, **extra):
    c.create_session(id=sid, source_lang="en", target_lang="en", stopword_list=["the"], **extra)
    return [post_seg(c, sid, s) for s in SLIDES]


# ---- service routes ------------------------------------------------------------

def test_listening_line_on_stdout():
    check(S.saw_line, "no line 'adaptmon listening on http://…' on stdout when ready "
          "(stdout so far: %r)" % open(S.out_path, "rb").read()[:300])
    with open(S.out_path, "rb") as f:
        eq(f.read().decode().count("http://127.0.0.1:%d" % S.port) >= 1, True,
           "the listening line names the address and port")


def test_healthz_readyz():
    r = C.get("/healthz")
    expect_status(r, 200, "/healthz")
    eq(r.content_type, "application/json", "/healthz Content-Type")
    eq(r.json().get("status"), "ok", "/healthz status")
    r = C.get("/readyz")
    expect_status(r, 200, "/readyz")
    d = r.json()
    eq(d.get("status"), "ready", "/readyz status")
    check(isinstance(d.get("schema_version"), int) and d["schema_version"] >= 1,
          "/readyz schema_version: %r" % d)


def test_openapi_served_as_yaml():
    r = C.get("/openapi.yaml")
    expect_status(r, 200, "/openapi.yaml")
    eq(r.content_type, "application/yaml", "/openapi.yaml Content-Type")
    with open(os.path.join(ROOT, "openapi.yaml"), "rb") as f:
        eq(r.body == f.read(), True, "served /openapi.yaml equals the repository's openapi.yaml")


def test_link_service_desc_header():
    for path in ("/healthz", "/v1/sessions", "/v1/sessions/no-such-session"):
        r = C.get(path)
        links = ", ".join(r.header_all("Link"))
        check(re.search(r'</openapi\.yaml>\s*;\s*rel="?service-desc"?', links),
              "GET %s: no Link </openapi.yaml>; rel=\"service-desc\" header (got %r)"
              % (path, links))


def test_prometheus_metrics():
    sid = "promcheck-q7x9"
    C.create_session(id=sid)
    post_seg(C, sid, {"id": "p1", "hypothesis": "un chat", "translation": "un chien"})
    C.get(base(sid) + "/metrics")
    C.get(base(sid) + "/segments/p1")
    C.get("/v1/sessions/promcheck-missing")
    r = C.get("/metrics")
    expect_status(r, 200, "/metrics")
    eq(r.content_type, "text/plain", "/metrics Content-Type")
    text = r.text
    check(re.search(r"^adaptmon_http_requests_total\{[^}]*\} \d", text, re.M),
          "adaptmon_http_requests_total samples missing:\n" + text[:1500])
    check("# TYPE adaptmon_http_requests_total counter" in text, "TYPE line missing")
    sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})?'
                        r' [-+]?([0-9.eE+-]+|NaN|\+Inf|-Inf)( \d+)?$')
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        check(sample.match(line), "not a Prometheus sample line: %r" % line)
        check("promcheck" not in line, "session id in a metric label: %r" % line)
    check(re.search(r'route="/v1/sessions/\{id\}/segments"', text),
          "requests are not labelled by route pattern:\n" + text[:1500])


def _routes_c():
    with open(os.path.join(ROOT, "server", "api", "routes.c"), encoding="utf-8") as f:
        src = f.read()
    rows = re.findall(r'\{\s*"([A-Z]+)"\s*,\s*"([^"]+)"\s*,\s*(\w+)\s*,\s*(AM_AUTH_\w+)\s*(?:,\s*\w+\s*)?\}', src)
    check(len(rows) >= 10, "could not parse the route table of server/api/routes.c")
    return {(m, p): auth for m, p, _h, auth in rows}


def _openapi_operations():
    """(METHOD, path) of openapi.yaml, read by indentation (paths: → 2 spaces
    → 4 spaces); independent of the node validator."""
    ops = set()
    with open(os.path.join(ROOT, "openapi.yaml"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    in_paths, path = False, None
    for line in lines:
        if re.match(r"^\S", line):
            in_paths = line.startswith("paths:")
            continue
        if not in_paths:
            continue
        m = re.match(r"^  (/[^:\s]*|'/[^']*'):\s*$", line)
        if m:
            path = m.group(1).strip("'")
            continue
        m = re.match(r"^    (get|put|post|delete|patch|head|options|trace):", line)
        if m and path:
            ops.add((m.group(1).upper(), path))
    return ops


def test_routes_c_equals_openapi_paths():
    routes = set(_routes_c())
    ops = _openapi_operations()
    missing = sorted(routes - ops)
    extra = sorted(ops - routes)
    check(not missing and not extra,
          "routes.c and openapi.yaml differ: served but not in openapi.yaml %s; in openapi.yaml "
          "but not served %s" % (missing, extra))


def test_every_route_answers_and_others_are_405_with_allow():
    routes = _routes_c()
    by_path = {}
    for m, p in routes:
        by_path.setdefault(p, set()).add(m)
    for p, methods in sorted(by_path.items()):
        concrete = re.sub(r"\{[^}]+\}", "zz-none", p)
        for m in sorted(methods):
            r = C.request(m, concrete, b"{}" if m in ("POST", "PUT") else None,
                          ctype="application/json" if m in ("POST", "PUT") else None)
            check(r.status != 405, "%s %s: 405 for a route of the table" % (m, concrete))
        for m in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            if m in methods:
                continue
            r = C.request(m, concrete, b"{}" if m in ("POST", "PUT", "PATCH") else None,
                          ctype="application/json" if m in ("POST", "PUT", "PATCH") else None)
            expect_problem(r, 405, "method-not-allowed", "%s %s" % (m, concrete))
            allow = r.header("Allow")
            check(allow is not None, "%s %s: 405 without Allow" % (m, concrete))
            got = {a.strip() for a in allow.split(",") if a.strip()} - {"HEAD", "OPTIONS"}
            eq(got, methods, "%s %s: Allow" % (m, concrete))


API_DIR = os.path.join(ROOT, "tests", "api")
_npm_done = []


def npm_ci():
    """Installs tests/api/node_modules from package-lock.json once per run
    (offline afterwards: every tool runs from node_modules)."""
    if _npm_done:
        return
    p = subprocess.run(["npm", "ci", "--prefix", API_DIR, "--no-audit", "--no-fund",
                        "--loglevel=error"], capture_output=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError("npm ci failed: %s" % p.stderr.decode("utf-8", "replace")[-2000:])
    _npm_done.append(True)


def node_bin(name):
    return os.path.join(API_DIR, "node_modules", ".bin", name)


def test_openapi_validates_as_3_1():
    api_dir = API_DIR
    npm_ci()
    p = subprocess.run(["node", os.path.join(api_dir, "openapi_check.mjs"),
                        os.path.join(ROOT, "openapi.yaml")], capture_output=True, timeout=120)
    out = p.stdout.decode("utf-8", "replace").strip().splitlines()
    check(out, "openapi_check.mjs printed nothing: %s" % p.stderr.decode("utf-8", "replace"))
    d = json.loads(out[-1])
    if not d.get("valid"):
        raise AssertionError("openapi.yaml is not a valid OpenAPI 3.1 document: %s" % d.get("error"))
    check(str(d["openapi"]).startswith("3.1"), "openapi version %r" % d["openapi"])
    eq(set(map(tuple, d["operations"])), set(_routes_c()),
       "operations of the validated document vs routes.c")


def test_openapi_redocly_lint_clean():
    """redocly lint (the recommended rules, redocly.yaml) finds no error and no warning."""
    npm_ci()
    # offline: no telemetry, no update check
    env = dict(os.environ, REDOCLY_TELEMETRY="off", REDOCLY_SUPPRESS_UPDATE_NOTICE="true",
               REDOCLY_SUPPRESS_NOTIFICATIONS="true", DO_NOT_TRACK="1", NO_COLOR="1")
    p = subprocess.run([node_bin("redocly"), "lint", "--config", os.path.join(ROOT, "redocly.yaml"),
                        "--format=json", os.path.join(ROOT, "openapi.yaml")],
                       capture_output=True, timeout=180, env=env)
    out = p.stdout.decode("utf-8", "replace")
    try:
        d = json.loads(out[out.index("{"):])
    except ValueError:
        raise AssertionError("redocly printed no JSON (status %d): %s %s"
                             % (p.returncode, out[-1500:], p.stderr.decode()[-1500:]))
    problems = ["%s %s: %s" % (x.get("severity"), x.get("ruleId"), x.get("message"))
                for x in d.get("problems", [])]
    eq((d["totals"]["errors"], d["totals"]["warnings"], problems), (0, 0, []),
       "redocly lint errors, warnings")
    eq(p.returncode, 0, "redocly lint exit status")


def _check_records(records):
    """Runs response_check.mjs on records; returns (exit status, FAIL lines, last line)."""
    d = tmpdir()
    path = os.path.join(d, "rec.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    p = subprocess.run(["node", os.path.join(API_DIR, "response_check.mjs"),
                        os.path.join(ROOT, "openapi.yaml"), path], capture_output=True, timeout=120)
    lines = p.stdout.decode("utf-8", "replace").splitlines()
    return p.returncode, [x for x in lines if x.startswith("FAIL")], (lines or [""])[-1]


def test_response_check_rejects_what_openapi_does_not_say():
    """The checker run by tests/run.sh on every recorded response: a response
    that follows the document passes; undocumented statuses, content types and
    headers, missing required headers and schema mismatches each fail."""
    npm_ci()
    common = [["Content-Type", "application/json"], ["X-Request-Id", "r1"],
              ["Link", '</openapi.yaml>; rel="service-desc"']]
    good = {"method": "GET", "path": "/healthz", "status": 200, "headers": common,
            "body": '{"status":"ok"}'}
    rc, fails, last = _check_records([good])
    eq((rc, fails, last), (0, [], "response check: 1 responses, 0 failures"), "a good response")
    bad_session = C.create_session(id="checker-session")  # a real session object
    bad_session["options"] = dict(bad_session["options"], source_lang="en")
    bad = [
        dict(good, status=418),
        dict(good, headers=[["Content-Type", "text/html"]] + common[1:]),
        dict(good, headers=common + [["X-Secret", "1"]]),
        {"method": "PATCH", "path": "/v1/sessions", "status": 405, "headers": common[1:] +
         [["Content-Type", "application/problem+json"]],
         "body": json.dumps({"type": PROBLEM_BASE + "method-not-allowed", "title": "Method not "
                             "allowed", "status": 405, "detail": "no"})},
        {"method": "GET", "path": "/v1/sessions/x", "status": 200, "headers": common,
         "body": json.dumps(bad_session)},
        {"method": "GET", "path": "/v1/nothing", "status": 200, "headers": common, "body": "{}"},
    ]
    rc, fails, last = _check_records(bad)
    eq(rc, 1, "exit status with bad responses")
    for frag in ("GET /healthz 418: undocumented status",
                 "undocumented content type text/html",
                 "undocumented header x-secret",
                 "PATCH /v1/sessions 405: required header allow missing",
                 "GET /v1/sessions/{id} 200: schema: /options must NOT have additional properties "
                 "(source_lang)",
                 "a path outside the document must be 404"):
        check(any(frag in f for f in fails), "no failure %r among %s" % (frag, fails))
    eq(last, "response check: %d responses, %d failures" % (len(bad), len(fails)), "summary")


def test_typescript_client_compiles_strict_and_runs_the_readme():
    """openapi-typescript types of openapi.yaml + tests/api/client/readme_client.ts
    compile with tsc --strict; the program then sends the README's bodies to a
    fresh server and checks the README's numbers."""
    npm_ci()
    d = tmpdir()
    shutil.copy(os.path.join(API_DIR, "client", "readme_client.ts"), d)
    p = subprocess.run([node_bin("openapi-typescript"), os.path.join(ROOT, "openapi.yaml"),
                        "--default-non-nullable", "false", "-o", os.path.join(d, "api.d.ts")],
                       capture_output=True, timeout=180, cwd=API_DIR)
    eq(p.returncode, 0, "openapi-typescript: %s" % p.stderr.decode("utf-8", "replace")[-2000:])
    p = subprocess.run([node_bin("tsc"), "--strict", "--noEmitOnError", "--target", "es2022",
                        "--module", "nodenext", "--moduleResolution", "nodenext",
                        "--lib", "es2022,dom", "--outDir", os.path.join(d, "out"),
                        os.path.join(d, "readme_client.ts")], capture_output=True, timeout=300)
    eq(p.returncode, 0, "tsc --strict: %s" % (p.stdout + p.stderr).decode("utf-8", "replace")[-3000:])
    srv = Server()
    try:
        p = subprocess.run(["node", os.path.join(d, "out", "readme_client.js"),
                            "http://127.0.0.1:%d" % srv.port], capture_output=True, timeout=120)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        eq((p.returncode, out.strip().splitlines()[-1:]), (0, ["readme client: ok"]),
           "the README client")
    finally:
        eq(srv.stop(), 0, "exit status of the README client's server")


def test_unknown_path_is_404_problem():
    expect_problem(C.get("/v1/nothing-here"), 404, "not-found", "GET /v1/nothing-here")


# ---- sessions ----------------------------------------------------------------

SESSION_REQUIRED = ("id", "source_lang", "target_lang", "signature", "segments", "options",
                    "created_at", "updated_at")


def test_session_create_get_delete():
    r = C.post("/v1/sessions", {"id": "sess-a", "name": "Demo", "source_lang": "en",
                                "target_lang": "fr", "metadata": {"project": "x"},
                                "options": {"baseline_system": "baseline", "k": 2}})
    expect_status(r, 201, "create")
    eq(r.header("Location"), "/v1/sessions/sess-a", "Location")
    s = r.json()
    for k in SESSION_REQUIRED:
        check(k in s, "session lacks %r: %r" % (k, s))
    eq([s["id"], s["name"], s["source_lang"], s["target_lang"], s["segments"]],
       ["sess-a", "Demo", "en", "fr", 0], "session fields")
    eq(s["metadata"], {"project": "x"}, "metadata")
    eq(s["options"].get("k"), 2, "options.k")
    eq(s["options"].get("baseline_system"), "baseline", "options.baseline_system")
    for k in ("profile", "tokenizer", "case", "normalize", "stopwords", "windows", "term_cost"):
        check(k in s["options"], "effective options lack %r: %r" % (k, s["options"]))
    check(s["signature"].startswith("adaptmon:") and "k:2" in s["signature"],
          "signature %r" % s["signature"])
    eq(C.jget("/v1/sessions/sess-a"), s, "GET equals the created session")
    expect_problem(C.post("/v1/sessions", {"id": "sess-a", "source_lang": "en",
                                           "target_lang": "fr"}), 409, "conflict", "same id")
    eq(C.jget("/v1/sessions/sess-a"), s, "a 409 changes nothing")
    r = C.delete("/v1/sessions/sess-a")
    expect_status(r, 204, "DELETE")
    eq(r.body, b"", "204 body")
    expect_problem(C.get("/v1/sessions/sess-a"), 404, "not-found", "GET after DELETE")
    expect_problem(C.delete("/v1/sessions/sess-a"), 404, "not-found", "DELETE again")


def test_session_generated_id():
    r = C.post("/v1/sessions", {"source_lang": "de", "target_lang": "en"})
    expect_status(r, 201, "create without id")
    s = r.json()
    check(re.match(r"^[A-Za-z0-9._-]{1,128}$", s["id"]), "generated id %r" % s["id"])
    eq(r.header("Location"), "/v1/sessions/" + s["id"], "Location")
    s2 = C.jpost("/v1/sessions", {"source_lang": "de", "target_lang": "en"}, 201)
    check(s2["id"] != s["id"], "two generated ids are equal")


def test_session_delete_removes_history():
    slides_session(C, "del-hist")
    C.put(base("del-hist") + "/glossary", [{"source": "dog", "targets": ["chien"]}])
    expect_status(C.delete(base("del-hist")), 204, "DELETE")
    for sub in ("/segments", "/segments/1", "/metrics", "/glossary", "/export",
                "/vocabulary/terrier"):
        expect_problem(C.get(base("del-hist") + sub), 404, "not-found", "GET %s after DELETE" % sub)
    # the same id again starts from nothing: segment 1 is 0-shot again
    res = slides_session(C, "del-hist")
    eq(count(res[0]["scores"]["systems"]["default"]["r0"]), [1, 3], "R0 of a recreated session")
    eq(C.jget(base("del-hist") + "/glossary")["count"], 0, "glossary of a recreated session")


def test_session_list_pagination():
    for i in range(5):
        C.create_session(id="page-%02d" % i)
    total = session_total(C)
    check(total >= 5, "total %d" % total)
    seen, after, pages = [], None, 0
    while True:
        q = "/v1/sessions?limit=3" + ("&after=" + after if after else "")
        d = C.jget(q)
        pages += 1
        check(len(d["sessions"]) <= 3, "page larger than limit")
        eq(d["total"], total, "total on every page")
        seen += [s["id"] for s in d["sessions"]]
        if d["next"] is None:
            break
        eq(d["next"], d["sessions"][-1]["id"], "next is the last id of the page")
        after = d["next"]
        check(pages < 1000, "pagination does not end")
    eq(seen, sorted(set(seen)), "ids ascending without duplicates")
    eq(len(seen), total, "every session listed once")
    for i in range(5):
        check("page-%02d" % i in seen, "page-%02d not listed" % i)
    d = C.jget("/v1/sessions?limit=2&after=page-01")
    eq([s["id"] for s in d["sessions"]], ["page-02", "page-03"], "after= cursor")
    for q in ("limit=0", "limit=1001", "limit=abc", "after=%20bad"):
        expect_problem(C.get("/v1/sessions?" + q), 400, "bad-request", "GET /v1/sessions?" + q)


def test_session_links_resolve():
    s = C.create_session(id="links-a")
    check(s.get("links"), "session has no links")
    for rel, href in sorted(s["links"].items()):
        # the event stream never ends: HEAD (tests/api/test_sse.py reads it)
        r = C.request("HEAD", href) if rel == "events" else C.get(href)
        check(r.status == 200, "link %s → GET %s answered %d %r" % (rel, href, r.status, r.body[:200]))


# ---- the slides example and word history ----------------------------------------

def test_slides_example():
    res = slides_session(C, "slides")
    s1, s2 = (r["scores"]["systems"]["default"] for r in res)
    eq(count(s1["r0"]), [1, 3], "segment 1 R0")
    eq(count(s1["r1"]), [0, 0], "segment 1 R1")
    eq(s1["r1"]["score"], None, "segment 1 R1 score (empty denominator)")
    check(abs(s1["r0"]["score"] - 1 / 3) < 1e-15, "segment 1 R0 score %r" % s1["r0"]["score"])
    eq(count(s2["r0"]), [1, 1], "segment 2 R0")
    eq(count(s2["r1"]), [2, 2], "segment 2 R1")
    t = res[1]["totals"]["default"]
    eq([count(t["r0"]), count(t["r1"]), count(t["r01"])], [[2, 4], [2, 2], [4, 6]], "totals")
    eq(t["segments"], 2, "totals.segments")
    eq([r["seq"] for r in res], [1, 2], "seq")
    words = {w["word"]: (w["shot"], w["hits"]["default"]) for w in res[1]["scores"]["words"]}
    eq(words, {"man": (0, True), "bites": (1, True), "terrier": (1, True)}, "segment 2 words")
    words = {w["word"]: (w["shot"], w["hits"]["default"]) for w in res[0]["scores"]["words"]}
    eq(words, {"terrier": (0, False), "bites": (0, True), "woman": (0, False)}, "segment 1 words")
    m = metrics(C, "slides")
    tm = m["systems"]["default"]
    eq([count(tm["r0"]), count(tm["r1"]), count(tm["r01"])], [[2, 4], [2, 2], [4, 6]],
       "metrics totals")
    eq(m["segments"], 2, "metrics.segments")
    eq(C.jget(base("slides"))["segments"], 2, "session.segments")


def test_vocabulary_word_history():
    slides_session(C, "words")
    d = C.jget(base("words") + "/vocabulary/Terrier")
    eq(d["normalized"], "terrier", "normalized word")
    eq(d["occurrences"], 2, "occurrences")
    eq([(h["seq"], h["id"], h["shot"], h["hits"]) for h in d["history"]],
       [(1, "1", 0, {"default": False}), (2, "2", 1, {"default": True})], "history")
    d = C.jget(base("words") + "/vocabulary/man")
    eq([(h["seq"], h["shot"]) for h in d["history"]], [(2, 0)], "man")
    expect_problem(C.get(base("words") + "/vocabulary/zebra"), 404, "not-found", "unseen word")
    expect_problem(C.get(base("no-such") + "/vocabulary/man"), 404, "not-found", "unknown session")


# ---- TICO-19 ----------------------------------------------------------------------

_tico_metrics = {}


def _tico_session(sid, glossary=False):
    """A session with the simianer2019 options and all 971 segments posted
    (Fairseq as the hypothesis); returns its /metrics (cached per sid)."""
    if sid in _tico_metrics:
        return _tico_metrics[sid]
    C.create_session(id=sid, source_lang="en", target_lang="fr", options=dict(SIMIANER))
    if glossary:
        with open(TICO_GLOSSARY, "rb") as f:
            r = C.put(base(sid) + "/glossary", f.read(), ctype="text/csv")
        expect_status(r, 200, "PUT TICO-19 glossary")
        g = r.json()
        check(g["entries"] > 100, "glossary entries %r" % g)
        eq(C.jget(base(sid) + "/glossary")["count"], g["entries"], "GET glossary count")
        eq(C.jget(base(sid))["glossary"]["entries"], g["entries"], "session.glossary.entries")
    res = post_all(C, sid, tico19(), system="Fairseq")
    eq([r["seq"] for r in res], list(range(1, len(res) + 1)), "seq of 971 posts")
    m = metrics(C, sid)
    close_json(res[-1]["totals"], m["systems"], "last post's totals vs /metrics")
    _tico_metrics[sid] = m
    return m


def test_tico19_recall_equals_golden():
    g = golden()
    m = _tico_session("tico")
    eq(m["segments"], g["segments"], "segments")
    t = m["systems"]["Fairseq"]
    gr = g["simianer2019_rk.rb"]
    for k in ("r0", "r1", "r01"):
        eq(count(t[k]), gr[k], "session %s (rk.rb)" % k)
    check("profile:simianer2019" in m["signature"] and "sw:iso" in m["signature"],
          "signature %r" % m["signature"])


def test_tico19_bleu_chrf_ter_equal_sacrebleu():
    g = golden()["sacrebleu_2.6.0"]
    t = _tico_session("tico")["systems"]["Fairseq"]
    for key, gkey in (("bleu", "bleu"), ("chrf", "chrf2"), ("chrfpp", "chrf2pp"), ("ter", "ter")):
        check(t[key] is not None and abs(t[key] - g[gkey]) < 1e-9,
              "%s: got %r, sacreBLEU %r" % (key, t[key], g[gkey]))


def test_tico19_glossary_term_scores():
    m = _tico_session("tico-gloss", glossary=True)
    t = m["systems"]["Fairseq"]
    gr = golden()["simianer2019_rk.rb"]
    for k in ("r0", "r1", "r01"):
        eq(count(t[k]), gr[k], "%s with a glossary" % k)
    terms = t["terms"]
    check(terms["instances"] > 0 and terms["exact_match"] is not None,
          "no term scores: %r" % terms)
    check(0 < terms["exact"] <= terms["instances"], "exact %r" % terms)
    # the same data through `adaptmon score` must give the same term totals
    p = subprocess.run([ADAPTMON, "score", "--profile", "simianer2019", "--stopwords", "iso",
                        "--source-lang", "en", "--target-lang", "fr", "--sgm-src", SGM_SRC,
                        "--sgm-ref", SGM_REF, "--sgm-hyp", "Fairseq=" + SGM_HYP,
                        "--glossary", TICO_GLOSSARY, "--json"], capture_output=True, timeout=120)
    eq(p.returncode, 0, "adaptmon score exit status (%s)" % p.stderr.decode()[:300])
    cli = json.loads(p.stdout)["systems"]["Fairseq"]
    close_json(terms, cli["terms"], "terms (service vs adaptmon score)", rel=1e-12)
    # a session without a glossary reports no instances
    eq(_tico_session("tico")["systems"]["Fairseq"]["terms"]["instances"], 0,
       "instances without a glossary")


def test_two_systems_relative_differences():
    segs = tico19()[:60]
    both = []
    for i, s in enumerate(segs):
        # the "adaptive" system: the confirmed translation itself on every third segment
        both.append(dict(s, adaptive=s["translation"] if i % 3 == 0 else s["hypothesis"]))
    C.create_session(id="duo", options={"baseline_system": "baseline"})
    for s in both:
        post_seg(C, "duo", {"id": s["id"], "source": s["source"], "translation": s["translation"],
                            "hypotheses": {"baseline": s["hypothesis"], "adaptive": s["adaptive"]}})
    m = metrics(C, "duo")
    eq(sorted(m["systems"]), ["adaptive", "baseline"], "systems")
    eq(m["baseline_system"], "baseline", "baseline_system")
    eq(sorted(m["relative_to_baseline"]), ["adaptive"], "relative_to_baseline systems")
    rel = m["relative_to_baseline"]["adaptive"]
    b, a = m["systems"]["baseline"], m["systems"]["adaptive"]

    def val(t, k):
        return t[k]["score"] if isinstance(t[k], dict) else t[k]
    for k in ("r0", "r1", "r01", "bleu", "chrf", "ter"):
        exp = (val(a, k) - val(b, k)) / val(b, k)
        check(rel.get(k) is not None and math.isclose(rel[k], exp, rel_tol=1e-12, abs_tol=1e-15),
              "relative %s: got %r, expected %r" % (k, rel.get(k), exp))
    check(val(a, "bleu") > val(b, "bleu"), "adaptive BLEU should exceed baseline BLEU")
    # each system's totals equal those of a session scoring that system alone
    for name, key in (("baseline", "hypothesis"), ("adaptive", "adaptive")):
        sid = "solo-" + name
        C.create_session(id=sid)
        for s in both:
            post_seg(C, sid, {"id": s["id"], "source": s["source"],
                              "translation": s["translation"], "hypotheses": {name: s[key]}})
        close_json(metrics(C, sid)["systems"][name], m["systems"][name], name)


def test_relative_to_baseline_covers_every_shot():
    """relative_to_baseline has every recall shot of the session's k (r2, r3
    with k=3), each (x - b) / b of the two systems' totals, and terms exact
    match; older code listed only r0 and r1 (issue 15 item 5)."""
    segs = tico19()[:80]
    C.create_session(id="rel-k3", options={"baseline_system": "baseline", "k": 3})
    for i, s in enumerate(segs):
        adapt = s["translation"] if i % 2 == 0 else s["hypothesis"]
        post_seg(C, "rel-k3", {"id": s["id"], "source": s["source"],
                               "translation": s["translation"],
                               "hypotheses": {"baseline": s["hypothesis"], "adaptive": adapt}})
    m = metrics(C, "rel-k3")
    rel = m["relative_to_baseline"]["adaptive"]
    b, a = m["systems"]["baseline"], m["systems"]["adaptive"]
    for k in ("r0", "r1", "r2", "r3", "r01"):
        check(k in rel, "relative_to_baseline has %s: %r" % (k, sorted(rel)))
        hb, ha = b[k]["score"], a[k]["score"]
        if hb is None or ha is None or hb == 0:
            eq(rel.get(k), None, "relative %s undefined" % k)
            continue
        check(rel.get(k) is not None
              and math.isclose(rel[k], (ha - hb) / hb, rel_tol=1e-12, abs_tol=1e-15),
              "relative %s: got %r, expected %r" % (k, rel.get(k), (ha - hb) / hb))
    check(b["r2"]["total"] > 0 and b["r2"]["score"], "the data gives R2 a value")
    eq(rel.get("segments"), len(segs), "segments")


def test_relative_to_baseline_is_paired():
    """A segment without the baseline's hypothesis counts for the other system's
    totals but not in relative_to_baseline: that compares the two systems on
    the segments that carry both (checked against sums of the per-segment
    counts of those segments)."""
    segs = SLIDES + [{"id": "3", "source": "Die Frau beißt den Mann",
                      "hypothesis": "The lady bites the man",
                      "translation": "The woman bites the man"}]
    C.create_session(id="pairs", source_lang="de", target_lang="en",
                     options={"baseline_system": "base"}, stopword_list=["the"])
    answers = []
    for i, sg in enumerate(segs):
        hyps = {"base": sg["hypothesis"], "adapt": sg["translation"]}
        if i == 1:
            hyps = {"adapt": "nothing right"}  # the baseline's hypothesis is missing
        answers.append(post_seg(C, "pairs", {"id": sg["id"], "source": sg["source"],
                                             "translation": sg["translation"],
                                             "hypotheses": hyps}))
    m = metrics(C, "pairs")
    eq([m["systems"]["base"]["segments"], m["systems"]["adapt"]["segments"]], [2, 3],
       "each system's own totals count its own segments")
    rel = m["relative_to_baseline"]["adapt"]
    paired = [a for i, a in enumerate(answers) if i != 1]
    for k in ("r0", "r1", "r01"):
        hb = sum(a["scores"]["systems"]["base"][k]["hits"] for a in paired)
        tb = sum(a["scores"]["systems"]["base"][k]["total"] for a in paired)
        ha = sum(a["scores"]["systems"]["adapt"][k]["hits"] for a in paired)
        ta = sum(a["scores"]["systems"]["adapt"][k]["total"] for a in paired)
        if tb == 0 or ta == 0 or hb == 0:
            eq(rel[k], None, "relative %s undefined" % k)
            continue
        exp = (ha / ta - hb / tb) / (hb / tb)
        check(rel[k] is not None and math.isclose(rel[k], exp, rel_tol=1e-12),
              "paired relative %s: got %r, expected %r (over segments 1 and 3)"
              % (k, rel[k], exp))
    eq(rel.get("segments"), 2, "paired segments")
    # a rescore (same glossary) keeps the pair totals
    expect_status(C.post(base("pairs") + "/rescore", {}), 200, "rescore")
    eq(metrics(C, "pairs")["relative_to_baseline"], m["relative_to_baseline"],
       "relative_to_baseline after a rescore")
    # a PUT that gives segment 2 both systems replays the pair totals too
    r = C.put(base("pairs") + "/segments/2", {"id": "2", "source": segs[1]["source"],
                                               "translation": segs[1]["translation"],
                                               "hypotheses": {"base": segs[1]["hypothesis"],
                                                              "adapt": "nothing right"}})
    expect_status(r, 200, "PUT segment 2 with both systems")
    m = metrics(C, "pairs")
    eq(m["relative_to_baseline"]["adapt"]["segments"], 3, "paired segments after the PUT")
    eq([m["systems"]["base"]["segments"], m["systems"]["adapt"]["segments"]], [3, 3],
       "both systems on every segment")


def test_declared_systems_are_required_exactly():
    r = C.post("/v1/sessions", {"id": "decl-bad", "source_lang": "en", "target_lang": "fr",
                                "systems": ["a", "b"], "options": {"baseline_system": "c"}})
    expect_problem(r, 422, "invalid-value", "baseline outside the declared systems")
    for bad in ([], ["a", "a"], ["a b"], "a", [1]):
        expect_problem(C.post("/v1/sessions", {"id": "decl-bad", "source_lang": "en",
                                               "target_lang": "fr", "systems": bad}),
                       422, "invalid-value", "systems %r" % (bad,))
    expect_status(C.get(base("decl-bad")), 404, "refused sessions are not created")
    s = C.create_session(id="decl", systems=["baseline", "adaptive"],
                         options={"baseline_system": "baseline"})
    eq(s["systems"], ["baseline", "adaptive"], "declared systems echoed")
    before = snapshot(C, "decl")
    seg = {"id": "1", "source": "a", "translation": "the terrier bites"}
    for body, field in ((dict(seg, hypothesis="x"), "hypothesis"),
                        (dict(seg, hypotheses={"baseline": "x"}), "hypotheses"),
                        (dict(seg, hypotheses={"baseline": "x", "adaptive": "y", "other": "z"}),
                         "hypotheses"),
                        (dict(seg, hypotheses={"baseline": "x", "adaptiv": "y"}), "hypotheses")):
        p = expect_problem(C.post(base("decl") + "/segments", body), 422, "invalid-value",
                           "segment with %r" % (body.get("hypotheses") or "hypothesis"))
        eq(p.get("field"), field, "problem field")
    same_snapshot(C, "decl", before, "refused segments change nothing")
    post_seg(C, "decl", dict(seg, hypotheses={"baseline": "x", "adaptive": "the terrier"}))
    # PUT is held to the same rule
    r = C.put(base("decl") + "/segments/1", dict(seg, hypotheses={"adaptive": "y"}))
    expect_problem(r, 422, "invalid-value", "PUT with one system missing")
    eq(sorted(metrics(C, "decl")["systems"]), ["adaptive", "baseline"], "systems")
    # one declared system: `hypothesis` names it
    C.create_session(id="decl-one", systems=["mt"])
    a = post_seg(C, "decl-one", dict(seg, hypothesis="the terrier"))
    eq(sorted(a["totals"]), ["mt"], "hypothesis counted for the declared system")
    eq(sorted(metrics(C, "decl-one")["systems"]), ["mt"], "no system 'default'")
    expect_status(C.post(base("decl-one") + "/rescore", {}), 200, "rescore")
    eq(sorted(metrics(C, "decl-one")["systems"]), ["mt"], "no system 'default' after a rescore")


def test_hypothesis_to_a_session_with_a_baseline_is_refused():
    """Posting `hypothesis` to a two-system session used to add a third
    system "default" silently."""
    C.create_session(id="nodefault", options={"baseline_system": "baseline"})
    seg = {"id": "1", "translation": "the terrier bites"}
    post_seg(C, "nodefault", dict(seg, hypotheses={"baseline": "x", "adaptive": "y"}))
    before = snapshot(C, "nodefault")
    p = expect_problem(C.post(base("nodefault") + "/segments",
                              dict(seg, id="2", hypothesis="the terrier")),
                       422, "invalid-value", "hypothesis with a baseline_system")
    eq(p.get("field"), "hypothesis", "problem field")
    same_snapshot(C, "nodefault", before, "a refused segment changes nothing")
    eq(sorted(metrics(C, "nodefault")["systems"]), ["adaptive", "baseline"], "systems")


def test_simianer2019_echoes_what_it_runs_and_refuses_what_it_cannot():
    s = C.create_session(id="sim-eff", options=dict(SIMIANER))
    o = s["options"]
    eq([o["tokenizer"], o["case"], o["normalize"], o["strip_tags"], o["stem_match"]],
       ["none", "sensitive", "none", False, False], "simianer2019 effective settings")
    check("tok:ws|case:sensitive|norm:none" in s["signature"], "signature %r" % s["signature"])
    for opt, val in (("case", "fold"), ("normalize", "nfkc"), ("tokenizer", "intl"),
                     ("strip_tags", True), ("stem_match", True)):
        p = expect_problem(C.post("/v1/sessions", {"id": "sim-bad", "source_lang": "en",
                                                   "target_lang": "fr",
                                                   "options": dict(SIMIANER, **{opt: val})}),
                           422, "invalid-value", "simianer2019 with %s %r" % (opt, val))
        check(opt in p["detail"], "detail names %r: %r" % (opt, p["detail"]))
    expect_status(C.get(base("sim-bad")), 404, "refused sessions are not created")
    # the values it runs may be given
    s2 = C.create_session(id="sim-ok", options=dict(SIMIANER, case="sensitive", normalize="none"))
    eq(s2["signature"], s["signature"], "explicit values it runs change nothing")
    # and the standard profile echoes what its defaults run (never "auto")
    o = C.create_session(id="std-eff")["options"]
    eq([o["tokenizer"], o["stopwords"], o["case"], o["normalize"]],
       ["intl", "snowball", "fold", "nfkc"], "standard")
    # options that would be stored and ignored are refused too
    for body, field in (({"options": {"rare_threshold": 3}}, "options.rare_threshold"),
                        ({"options": {"stopwords": "iso"}, "stopword_list": ["le"]},
                         "stopword_list")):
        p = expect_problem(C.post("/v1/sessions", dict(body, id="ignored", source_lang="en",
                                                       target_lang="fr")),
                           422, "invalid-value", "ignored option %r" % (body,))
        eq(p.get("field"), field, "problem field")
    expect_status(C.get(base("ignored")), 404, "refused sessions are not created")


ZH_REF = "我们今天在北京开会，讨论新的翻译系统。"
ZH_HYP = "我们明天在上海开会，讨论新的翻译系统。"


def test_cat_tool_language_codes():
    """memoQ's ISO 639-2/B codes and ISO 639-3 codes map to the BCP 47 form."""
    for code, canon in (("fre-FR", "fr-FR"), ("ger-DE", "de-DE"), ("fra", "fr"), ("zho", "zh")):
        s = C.create_session(id="lang-" + code, source_lang="en", target_lang=code)
        eq(s["target_lang"], canon, "target_lang %s" % code)
        eq(s["warnings"], [], "no warnings for %s" % code)
    eq(C.jget(base("lang-fre-FR"))["signature"],
       C.create_session(id="lang-fr-FR", target_lang="fr-FR")["signature"],
       "fre-FR and fr-FR sessions run the same settings")
    # the segment: zho used to make the sentence one content word
    r = {}
    for code in ("zh", "zho"):
        C.create_session(id="zh-" + code, source_lang="en", target_lang=code,
                         options={"stopwords": "none"})
        post_seg(C, "zh-" + code, {"id": "1", "hypothesis": ZH_HYP, "translation": ZH_REF})
        r[code] = count(metrics(C, "zh-" + code)["systems"]["default"]["r0"])
    check(r["zh"][1] > 5, "zh: friso's words, not one per sentence, got %r" % r["zh"])
    eq(r["zho"], r["zh"], "R0 with zho vs zh")


def test_session_echoes_the_tokenizer_and_stopwords_that_run():
    """Issue 24: GET and POST /v1/sessions say which tokenizer and stopword list
    run (auto resolved by target_lang) and how many stopwords are in use: only
    those the tokenizer can produce (282 of stopwords-iso's 794 for zh)."""
    want = {"fr": ("intl", "snowball"), "zh": ("zh-friso", "iso"), "th": ("char", "none"),
            "kl": ("intl", "none"), "cs": ("intl", "iso"), "ja": ("ja-mecab", "iso")}
    # the signature names friso's and MeCab's versions
    sig_tok = {"zh-friso": "zh-friso-1.6.4", "ja-mecab": "ja-mecab-0.996-IPA"}
    for lang, (tok, sw) in want.items():
        s = C.create_session(id="echo-" + lang, source_lang="en", target_lang=lang)
        for got in (s, C.jget(base("echo-" + lang))):
            eq((got["options"]["tokenizer"], got["options"]["stopwords"]), (tok, sw),
               "%s: tokenizer and stopwords echoed" % lang)
            check("|tok:%s|" % sig_tok.get(tok, tok) in got["signature"] and
                  "|sw:%s|" % sw in got["signature"],
                  "%s: the signature agrees: %r" % (lang, got["signature"]))
    with open(os.path.join(ROOT, "data/stopwords/stopwords-iso/stopwords-iso.json"),
              encoding="utf-8") as f:
        zh = json.load(f)["zh"]
    one_char = {unicodedata.normalize("NFKC", w).casefold() for w in zh if len(w) == 1}
    # defaults 2 (the character rule): the one-character stopwords only
    s = C.create_session(id="echo-zh2", source_lang="en", target_lang="zh",
                         options={"defaults": 2})
    eq(s["options"]["tokenizer"], "zh", "defaults 2: the character rule")
    eq(s["stopword_count"], len(one_char),
       "zh, defaults 2: the one-character stopwords only (of %d)" % len(zh))
    # friso cuts words such as 我们 alone too: more of the list can match
    n = C.jget(base("echo-zh"))["stopword_count"]
    check(len(one_char) < n < len(zh), "zh-friso stopwords in use: %d" % n)
    # a zh session counts friso's words, as `adaptmon score --target-lang zh` does
    post_seg(C, "echo-zh", {"id": "1", "hypothesis": ZH_HYP, "translation": ZH_REF})
    zr0 = metrics(C, "echo-zh")["systems"]["default"]["r0"]
    tmp = tempfile.mkdtemp(prefix="adaptmon-zh-")
    for name, text in (("ref.zh", ZH_REF), ("default.zh", ZH_HYP)):
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
            f.write(text + "\n")
    out = subprocess.run([ADAPTMON, "score", "--target-lang", "zh", "--json",
                          "--ref", os.path.join(tmp, "ref.zh"),
                          "--hyp", os.path.join(tmp, "default.zh")],
                         capture_output=True, check=True).stdout
    shutil.rmtree(tmp)
    cli = json.loads(out)["systems"]["default"]["r0"]
    eq((zr0["hits"], zr0["total"]), (cli["hits"], cli["total"]), "zh R0: session = score")
    # 今天 北京 开会 讨论 新的/新 翻译 系统: words, not 12 characters
    check(3 <= zr0["total"] < 10, "friso's words, not characters: %r" % zr0)
    eq(C.jget(base("echo-fr"))["stopword_count"] > 100, True, "fr: the Snowball list")
    eq(C.jget(base("echo-kl"))["stopword_count"], 0, "kl: no list")
    # Thai: the char tokenizer splits every stopwords-iso word, so none applies
    # and the session says so rather than claim a list
    check("|warn:no-stopwords" in C.jget(base("echo-th"))["signature"], "th warns")
    # a ja session counts MeCab's words, as `adaptmon score --target-lang ja` does
    ja_ref = "\u96fb\u6c17\u81ea\u52d5\u8eca\u306e\u5145\u96fb\u3063\u3066\u3001\u6642\u9593\u304c" \
             "\u304b\u304b\u308b\u306e\u3088\u3002"  # 電気自動車の充電って、時間がかかるのよ。
    ja_hyp = "\u96fb\u6c17\u81ea\u52d5\u8eca\u306e\u5145\u96fb\u306f\u6642\u9593\u304c" \
             "\u304b\u304b\u308b\u3002"  # 電気自動車の充電は時間がかかる。
    post_seg(C, "echo-ja", {"id": "1", "hypothesis": ja_hyp, "translation": ja_ref})
    r0 = metrics(C, "echo-ja")["systems"]["default"]["r0"]
    tmp = tempfile.mkdtemp(prefix="adaptmon-ja-")
    for name, text in (("ref.ja", ja_ref), ("default.ja", ja_hyp)):
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
            f.write(text + "\n")
    out = subprocess.run([ADAPTMON, "score", "--target-lang", "ja", "--json",
                          "--ref", os.path.join(tmp, "ref.ja"),
                          "--hyp", os.path.join(tmp, "default.ja")],
                         capture_output=True, check=True).stdout
    shutil.rmtree(tmp)
    cli = json.loads(out)["systems"]["default"]["r0"]
    eq((r0["hits"], r0["total"]), (cli["hits"], cli["total"]), "ja R0: session = score")
    check(r0["total"] >= 5, "MeCab words, not characters or kana runs: %r" % r0)
    # an explicit choice is echoed as given
    o = C.create_session(id="echo-x", target_lang="zh",
                         options={"tokenizer": "char", "stopwords": "none"})["options"]
    eq((o["tokenizer"], o["stopwords"]), ("char", "none"), "explicit values")
    # no target language: warned, in the warnings and the signature
    s = C.create_session(id="echo-und", target_lang="und")
    check(s["signature"].endswith("|warn:no-target-lang"), "signature %r" % s["signature"])
    check(any("target_lang 'und'" in w for w in s["warnings"]), "warnings %r" % s["warnings"])


def test_languages_without_stopwords_or_tokenizer_say_so():
    s = C.create_session(id="lang-kal", source_lang="en", target_lang="kal")
    eq(s["target_lang"], "kl", "kal → kl")
    eq(len(s["warnings"]), 1, "warnings %r" % s["warnings"])
    check("no stopword list" in s["warnings"][0], "warning %r" % s["warnings"])
    check(s["signature"].endswith("|warn:no-stopwords"), "signature %r" % s["signature"])
    s = C.create_session(id="lang-xq", source_lang="qqa", target_lang="xq")
    eq(len(s["warnings"]), 3, "warnings %r" % s["warnings"])
    check(any("tokenizer" in w and "guess" in w for w in s["warnings"]),
          "tokenizer warning %r" % s["warnings"])
    check("|warn:no-stopwords,unknown-target-lang,unknown-source-lang" in s["signature"],
          "signature %r" % s["signature"])
    eq(C.create_session(id="lang-none", target_lang="kl", options={"stopwords": "none"})
       ["warnings"], [], "stopwords none is a choice")


# ---- errors ------------------------------------------------------------------------

def _error_session(sid):
    slides_session(C, sid)
    return snapshot(C, sid)


def test_error_malformed_json_400():
    before = _error_session("err-json")
    n = session_total(C)
    for body in (b'{"id": "x", "translation": ', b"{'id': 1}", b"", b"[1, 2", b'{"id":"3"} x'):
        r = C.post(base("err-json") + "/segments", body, ctype="application/json")
        expect_problem(r, 400, "bad-json", "segment body %r" % body)
        r = C.post("/v1/sessions", body, ctype="application/json")
        expect_problem(r, 400, "bad-json", "session body %r" % body)
    same_snapshot(C, "err-json", before, "malformed JSON")
    eq(session_total(C), n, "sessions after malformed JSON")


def test_error_wrong_types_422():
    before = _error_session("err-types")
    n = session_total(C)
    segs = [{"id": "9", "hypothesis": "a", "translation": 5},
            {"id": "9", "hypothesis": ["a"], "translation": "b"},
            {"id": 9, "hypothesis": "a", "translation": "b"},
            {"id": "9", "hypotheses": "a", "translation": "b"},
            {"id": "9", "hypotheses": {"sys": 1}, "translation": "b"},
            {"id": "9", "hypothesis": "a", "translation": "b", "metadata": "x"},
            {"id": "9", "hypothesis": "a", "translation": "b", "terms": {"source": "a"}},
            {"id": "9", "source": 3, "hypothesis": "a", "translation": "b"}]
    for b in segs:
        expect_problem(C.post(base("err-types") + "/segments", b), 422, "invalid-value",
                       "segment %r" % b)
    # (an array is a batch: tests/api/test_edits.py)
    expect_problem(C.post(base("err-types") + "/segments", "5", ctype="application/json"), 400,
                   "bad-json", "segment body that is a number")
    sessions = [{"source_lang": 1, "target_lang": "fr"},
                {"source_lang": "en", "target_lang": "fr", "options": "k=1"},
                {"source_lang": "en", "target_lang": "fr", "name": 5},
                {"source_lang": "en", "target_lang": "fr", "metadata": []},
                {"source_lang": "en", "target_lang": "fr", "stopword_list": "the"},
                {"id": 17, "source_lang": "en", "target_lang": "fr"},
                {"source_lang": "en", "target_lang": "fr", "options": {"profile": "nope"}},
                {"source_lang": "en", "target_lang": "fr", "options": {"k": 99}}]
    for b in sessions:
        expect_problem(C.post("/v1/sessions", b), 422, "invalid-value", "session %r" % b)
    same_snapshot(C, "err-types", before, "wrong types")
    eq(session_total(C), n, "sessions after wrong types")


def test_error_option_types_422():
    """openapi.yaml types every option (integer, boolean, number): a string or
    an array where an integer belongs is a wrong type."""
    n = session_total(C)
    for opts in ({"k": "1"}, {"k": [1]}, {"k": 1.5}, {"stem_match": "true"},
                 {"strip_tags": 1}, {"term_cost": "2"}, {"windows": [2, "3"]},
                 {"rare_threshold": "0"}, {"k": True}):
        r = C.post("/v1/sessions", {"source_lang": "en", "target_lang": "fr", "options": opts})
        expect_problem(r, 422, "invalid-value", "options %r" % opts)
    eq(session_total(C), n, "sessions after wrong option types")


def test_error_missing_fields_422():
    before = _error_session("err-missing")
    n = session_total(C)
    for b, field in (({"id": "9", "hypothesis": "a"}, "translation"),
                     ({"id": "9", "translation": "a"}, "hypothesis"),
                     ({"hypothesis": "a", "translation": "b"}, "id")):
        p = expect_problem(C.post(base("err-missing") + "/segments", b), 422, "missing-field",
                           "segment without %s" % field)
        eq(p.get("field"), field, "problem.field")
    for b in ({"source_lang": "en"}, {"target_lang": "fr"}, {}):
        expect_problem(C.post("/v1/sessions", b), 422, "missing-field", "session %r" % b)
    expect_problem(C.post(base("err-missing") + "/check", {"hypothesis": "a"}), 422,
                   "missing-field", "check without source")
    same_snapshot(C, "err-missing", before, "missing fields")
    eq(session_total(C), n, "sessions after missing fields")


def test_error_unknown_fields_422():
    before = _error_session("err-unknown")
    n = session_total(C)
    seg = dict(SLIDES[0], id="9", bogus=1)
    p = expect_problem(C.post(base("err-unknown") + "/segments", seg), 422, "unknown-field",
                       "unknown segment field")
    eq(p.get("field"), "bogus", "problem.field")
    seg = dict(SLIDES[0], id="9", terms=[{"source": "a", "target": "b", "colour": "red"}])
    expect_problem(C.post(base("err-unknown") + "/segments", seg), 422, "unknown-field",
                   "unknown term annotation field")
    expect_problem(C.post(base("err-unknown") + "/check", {"source": "a", "bogus": 1}), 422,
                   "unknown-field", "unknown check field")
    expect_problem(C.post("/v1/sessions", {"source_lang": "en", "target_lang": "fr",
                                           "colour": "red"}), 422, "unknown-field",
                   "unknown session field")
    expect_problem(C.post("/v1/sessions", {"source_lang": "en", "target_lang": "fr",
                                           "options": {"bogus": 1}}), 422, "unknown-field",
                   "unknown option")
    same_snapshot(C, "err-unknown", before, "unknown fields")
    eq(session_total(C), n, "sessions after unknown fields")


def test_error_invalid_utf8_422():
    before = _error_session("err-utf8")
    n = session_total(C)
    bad = [b'{"id":"9","hypothesis":"a","translation":"caf\xe9"}',
           b'{"id":"9","hypothesis":"\xc3\x28","translation":"b"}',
           b'{"id":"9","hypothesis":"a","translation":"\xed\xa0\x80"}']
    for b in bad:
        expect_problem(C.post(base("err-utf8") + "/segments", b, ctype="application/json"), 422,
                       "invalid-utf8", "segment %r" % b)
    expect_problem(C.post(base("err-utf8") + "/segments",
                          {"id": "9", "hypothesis": "a", "translation": "b\u0000c"}), 422,
                   "invalid-utf8", "NUL in a translation")
    # a NUL anywhere else: the field checks would see the text up to it (an id
    # "x\u0000y" passed as "x"), and the stored request could not be read back
    for field, body in (("id", {"id": "x\u0000y", "hypothesis": "a", "translation": "b"}),
                        ("translator", {"id": "9", "hypothesis": "a", "translation": "b",
                                        "translator": "t\u0000"}),
                        ("metadata", {"id": "9", "hypothesis": "a", "translation": "b",
                                      "metadata": {"note": ["ok", "n\u0000"]}})):
        p = expect_problem(C.post(base("err-utf8") + "/segments", body), 422, "invalid-utf8",
                           "NUL in " + field)
        eq(p.get("field"), field, "the field of a NUL in " + field)
    # in a key: jansson refuses it while parsing
    expect_problem(C.post(base("err-utf8") + "/segments",
                          {"id": "9", "hypotheses": {"m\u0000t": "a"}, "translation": "b"}), 400,
                   "bad-json", "NUL in a key")
    expect_problem(C.post("/v1/sessions", b'{"source_lang":"en","target_lang":"fr","name":"\xff"}',
                          ctype="application/json"), 422, "invalid-utf8", "session")
    expect_problem(C.put(base("err-utf8") + "/glossary", b"source,target\ncaf\xe9,x\n",
                         ctype="text/csv"), 422, "invalid-utf8", "CSV glossary")
    expect_problem(C.put("/v1/vocabularies/bad-utf8", b"3 caf\xe9\n", ctype="text/plain"), 422,
                   "invalid-utf8", "vocabulary")
    expect_problem(C.get("/v1/vocabularies/bad-utf8"), 404, "not-found", "vocabulary not stored")
    same_snapshot(C, "err-utf8", before, "invalid UTF-8")
    eq(session_total(C), n, "sessions after invalid UTF-8")


def test_error_too_many_tokens_422():
    before = _error_session("err-tokens")
    seg = {"id": "9", "hypothesis": "a", "translation": "mot " * 10001}
    expect_problem(C.post(base("err-tokens") + "/segments", seg), 422, "too-many-tokens",
                   "10001 tokens")
    same_snapshot(C, "err-tokens", before, "too many tokens")


def test_error_body_too_large_413():
    srv = Server("--max-body", "4096")
    try:
        c = srv.client()
        c.create_session(id="big")
        for s in SLIDES:
            post_seg(c, "big", s)
        before = snapshot(c, "big")
        n = session_total(c)
        seg = {"id": "9", "hypothesis": "a", "translation": "x" * 5000}
        expect_problem(c.post(base("big") + "/segments", seg), 413, "payload-too-large",
                       "5000-byte segment")
        c.close()
        expect_problem(c.post("/v1/sessions", {"source_lang": "en", "target_lang": "fr",
                                               "metadata": {"pad": "y" * 8000}}),
                       413, "payload-too-large", "8000-byte session")
        c.close()
        r = c.post(base("big") + "/segments", b'{"id":"9",' + b" " * 100000 + b"}",
                   ctype="application/json")
        expect_problem(r, 413, "payload-too-large", "100 kB body")
        c.close()
        same_snapshot(c, "big", before, "a 413")
        eq(session_total(c), n, "sessions after 413")
        # just under the limit is fine
        post_seg(c, "big", {"id": "9", "hypothesis": "a", "translation": "x " * 1900})
        c.close()
        eq(srv.stop(), 0, "exit status after SIGTERM")
    finally:
        srv.kill()


def test_error_unknown_session_or_segment_404():
    before = _error_session("err-404")
    n = session_total(C)
    for m, path, body in (("GET", "/v1/sessions/nope", None),
                          ("DELETE", "/v1/sessions/nope", None),
                          ("POST", "/v1/sessions/nope/segments", SLIDES[0]),
                          ("GET", "/v1/sessions/nope/segments", None),
                          ("GET", "/v1/sessions/nope/segments/1", None),
                          ("PUT", "/v1/sessions/nope/segments/1", SLIDES[0]),
                          ("GET", "/v1/sessions/nope/metrics", None),
                          ("GET", "/v1/sessions/nope/export", None),
                          ("POST", "/v1/sessions/nope/check", {"source": "a"}),
                          ("GET", "/v1/sessions/nope/glossary", None),
                          ("PUT", "/v1/sessions/nope/glossary", [{"source": "a", "target": "b"}]),
                          ("DELETE", "/v1/sessions/nope/glossary", None),
                          ("GET", "/v1/sessions/err-404/segments/77", None),
                          ("DELETE", "/v1/sessions/err-404/segments/77", None),
                          ("DELETE", "/v1/sessions/nope/segments/1", None),
                          ("GET", "/v1/vocabularies/nope", None),
                          ("DELETE", "/v1/vocabularies/nope", None)):
        expect_problem(C.request(m, path, body), 404, "not-found", "%s %s" % (m, path))
    same_snapshot(C, "err-404", before, "404s")
    eq(session_total(C), n, "sessions after 404s")


def test_error_unsupported_media_type_415():
    before = _error_session("err-415")
    n = session_total(C)
    body = json.dumps(dict(SLIDES[0], id="9"))
    for ct in ("text/plain", "application/x-www-form-urlencoded", "application/xml"):
        expect_problem(C.post(base("err-415") + "/segments", body, ctype=ct), 415,
                       "unsupported-media-type", "segment as %s" % ct)
    expect_problem(C.post("/v1/sessions", '{"source_lang":"en","target_lang":"fr"}',
                          ctype="text/plain"), 415, "unsupported-media-type", "session as text")
    expect_problem(C.put(base("err-415") + "/glossary", "a,b\n", ctype="application/pdf"), 415,
                   "unsupported-media-type", "glossary as PDF")
    expect_problem(C.put("/v1/vocabularies/v415", "3 a\n", ctype="application/json"), 415,
                   "unsupported-media-type", "vocabulary as JSON")
    expect_problem(C.post(base("err-415") + "/check", '{"source":"a"}', ctype="text/plain"), 415,
                   "unsupported-media-type", "check as text")
    same_snapshot(C, "err-415", before, "415s")
    eq(session_total(C), n, "sessions after 415s")


# ---- semantics -----------------------------------------------------------------------

def test_idempotent_repost_and_conflict():
    C.create_session(id="idem")
    first = post_seg(C, "idem", SLIDES[0], 201)
    r = C.post(base("idem") + "/segments", SLIDES[0])
    expect_status(r, 200, "same body again")
    eq(r.json(), first, "re-post answers the stored result")
    post_seg(C, "idem", SLIDES[1], 201)
    before = snapshot(C, "idem")
    etag = C.get(base("idem") + "/metrics").header("ETag")
    r = C.post(base("idem") + "/segments", SLIDES[0])
    expect_status(r, 200, "same body after another segment")
    eq(r.json(), first, "stored result after another segment")
    same_snapshot(C, "idem", before, "an idempotent re-post")
    eq(C.get(base("idem") + "/metrics").header("ETag"), etag, "ETag after a re-post")
    eq(before[1]["systems"]["default"]["segments"], 2, "nothing counted twice")
    p = expect_problem(C.post(base("idem") + "/segments", dict(SLIDES[0], translation="other")),
                       409, "conflict", "same id, other body")
    check("PUT" in p["detail"], "409 detail should point at PUT: %r" % p["detail"])
    same_snapshot(C, "idem", before, "a 409")


REPLAY = [
    {"id": "a", "source": "The terrier bites the woman", "hypothesis": "The dog bites the lady",
     "translation": "The terrier bites the woman"},
    {"id": "b", "source": "The man bites the terrier", "hypothesis": "The terrier bites the man",
     "translation": "The man bites the terrier"},
    {"id": "c", "source": "The woman walks the terrier", "hypothesis": "The lady walks the dog",
     "translation": "The woman walks the terrier"},
    {"id": "d", "source": "The man feeds the terrier", "hypothesis": "The man feeds the terrier",
     "translation": "The man feeds the dog"},
    {"id": "e", "source": "The dog bites the man", "hypothesis": "The dog bites the man",
     "translation": "The dog bites the man"},
]


def test_put_replaces_and_replays_history():
    C.create_session(id="put-a", source_lang="en", target_lang="en", stopword_list=["the"],
                     glossary=[{"source": "terrier", "targets": ["terrier"]}])
    for s in REPLAY:
        post_seg(C, "put-a", s)
    # the translator corrects segment b: the glossary's "terrier" is no longer used
    new_b = {"id": "b", "source": "The man bites the terrier",
             "hypothesis": "The terrier bites the man", "translation": "A lady feeds a dog"}
    r = C.put(base("put-a") + "/segments/b", new_b)
    expect_status(r, 200, "PUT")
    res = r.json()
    eq([res["id"], res["seq"]], ["b", 2], "PUT result id and seq")
    got = C.jget(base("put-a") + "/segments/b")
    eq(got["request"]["translation"], new_b["translation"], "stored request after PUT")
    # PUT without an id in the body takes the URL's
    r = C.put(base("put-a") + "/segments/e", {k: v for k, v in REPLAY[4].items() if k != "id"})
    expect_status(r, 200, "PUT with the id from the URL")
    # a fresh session that gets the corrected sequence
    C.create_session(id="put-b", source_lang="en", target_lang="en", stopword_list=["the"],
                     glossary=[{"source": "terrier", "targets": ["terrier"]}])
    for s in REPLAY:
        post_seg(C, "put-b", new_b if s["id"] == "b" else s)
    ma, mb = metrics(C, "put-a"), metrics(C, "put-b")
    check(ma["systems"]["default"]["terms"]["deviations"] > 0, "the glossary was applied")
    close_json(ma["systems"], mb["systems"], "metrics.systems after PUT vs fresh replay", rel=0)
    eq(ma["segments"], 5, "segments after PUT")
    ta, tb = timeline(C, "put-a"), timeline(C, "put-b")
    for x, y in zip(ta, tb):
        eq([x["seq"], x["id"]], [y["seq"], y["id"]], "timeline order")
        close_json(x["scores"], y["scores"], "scores of %s" % x["id"], rel=0)
        close_json(x["totals"], y["totals"], "running totals of %s" % x["id"], rel=0)
    for w in ("terrier", "lady", "man"):
        wa = C.jget(base("put-a") + "/vocabulary/" + w)
        wb = C.jget(base("put-b") + "/vocabulary/" + w)
        eq([wa["occurrences"], wa["history"]], [wb["occurrences"], wb["history"]],
           "history of %r after PUT vs fresh replay" % w)
    q = {"source": "the terrier", "hypothesis": "le terrier"}
    eq(C.jpost(base("put-a") + "/check", q, 200)["terms"],
       C.jpost(base("put-b") + "/check", q, 200)["terms"],
       "translator choices after PUT vs fresh replay")
    # the new body is now the stored one: re-posting it is idempotent, the old one conflicts
    expect_status(C.post(base("put-a") + "/segments", new_b), 200, "re-post of the PUT body")
    expect_problem(C.post(base("put-a") + "/segments", REPLAY[1]), 409, "conflict", "old body")
    # errors change nothing
    before = snapshot(C, "put-a")
    expect_problem(C.put(base("put-a") + "/segments/b", dict(new_b, id="c")), 422,
                   "invalid-value", "body id differs from the URL")
    expect_problem(C.put(base("put-a") + "/segments/b", {"id": "b", "translation": "x"}), 422,
                   "missing-field", "PUT without hypothesis")
    same_snapshot(C, "put-a", before, "failed PUTs")


def test_running_totals_with_changing_systems_and_a_put():
    """The server keeps each session's running totals in memory between
    POSTs; they must equal those of a session given the final sequence
    straight, while systems come and go and a PUT replays the session."""
    segs = tico19()[:36]

    def body(i, s, translation=None):
        hyps = {"base": s["hypothesis"]}
        if i % 3 != 1:
            hyps["adapt"] = s["translation"] if i % 2 else s["hypothesis"]
        if i in (5, 6, 20, 33):
            hyps["third"] = s["source"]
        return {"id": s["id"], "source": s["source"], "hypotheses": hyps,
                "translation": translation or s["translation"]}
    fixed = segs[8]["hypothesis"]  # the translator's correction of segment 4
    C.create_session(id="tot-a", options={"baseline_system": "base"})
    for i, s in enumerate(segs):
        post_seg(C, "tot-a", body(i, s))
        if i == 12:
            r = C.put(base("tot-a") + "/segments/" + segs[4]["id"], body(4, segs[4], fixed))
            expect_status(r, 200, "PUT in the middle")
    C.create_session(id="tot-b", options={"baseline_system": "base"})
    for i, s in enumerate(segs):
        post_seg(C, "tot-b", body(i, s, fixed if i == 4 else None))
    ma, mb = metrics(C, "tot-a"), metrics(C, "tot-b")
    eq(sorted(ma["systems"]), ["adapt", "base", "third"], "systems")
    eq(ma["systems"]["third"]["segments"], 4, "segments of the occasional system")
    close_json(ma["systems"], mb["systems"], "totals: posted with a PUT vs straight", rel=0)
    close_json(ma["relative_to_baseline"], mb["relative_to_baseline"], "relative", rel=0)
    for x, y in zip(timeline(C, "tot-a"), timeline(C, "tot-b")):
        close_json(x["totals"], y["totals"], "running totals of %s" % x["id"], rel=0)
    # the answer of a POST is the stored result, byte for byte
    r = C.post(base("tot-a") + "/segments", dict(body(0, segs[0]), id="extra"))
    expect_status(r, 201, "POST extra")
    again = C.post(base("tot-a") + "/segments", dict(body(0, segs[0]), id="extra"))
    expect_status(again, 200, "re-POST extra")
    eq(again.body, r.body, "re-post answers the same bytes")
    eq(r.json()["totals"]["base"]["segments"], 37, "running totals include every segment")


def test_concurrent_posts_are_serialized():
    segs = tico19()[:200]
    C.create_session(id="conc", options=dict(SIMIANER))
    results, errors = {}, []
    lock = threading.Lock()

    def worker(t):
        c = S.client()
        try:
            for i in range(t, len(segs), 8):
                s = segs[i]
                r = c.post(base("conc") + "/segments",
                           {"id": s["id"], "source": s["source"], "hypothesis": s["hypothesis"],
                            "translation": s["translation"]})
                with lock:
                    if r.status != 201:
                        errors.append((s["id"], r.status, r.body[:200]))
                    else:
                        results[s["id"]] = r.json()["seq"]
        except Exception as e:  # reported below
            with lock:
                errors.append(("thread %d" % t, repr(e)))
        finally:
            c.close()

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    check(not errors, "concurrent posts failed: %r" % errors[:5])
    eq(len(results), 200, "answers")
    eq(sorted(results.values()), list(range(1, 201)), "seq without gaps or duplicates")
    tl = timeline(C, "conc")
    eq([(x["seq"], x["id"]) for x in tl], sorted((v, k) for k, v in results.items()),
       "timeline order equals the answered seq")
    # a serial replay in seq order gives the same totals
    by_id = {s["id"]: s for s in segs}
    C.create_session(id="conc-serial", options=dict(SIMIANER))
    post_all(C, "conc-serial", [by_id[x["id"]] for x in tl])
    close_json(metrics(C, "conc")["systems"], metrics(C, "conc-serial")["systems"],
               "concurrent vs serial totals", rel=0)
    for x, y in zip(tl, timeline(C, "conc-serial")):
        close_json(x["scores"], y["scores"], "scores of %s" % x["id"], rel=0)


def test_metrics_etag_and_304():
    slides_session(C, "etag")
    r = C.get(base("etag") + "/metrics")
    expect_status(r, 200, "metrics")
    etag = r.header("ETag")
    check(etag and re.match(r'^"[^"]+"$', etag), "strong quoted ETag expected, got %r" % etag)
    r2 = C.get(base("etag") + "/metrics", headers={"If-None-Match": etag})
    expect_status(r2, 304, "If-None-Match with the current ETag")
    eq(r2.body, b"", "304 body")
    eq(r2.header("ETag"), etag, "ETag of the 304")
    r3 = C.get(base("etag") + "/metrics", headers={"If-None-Match": '"something-else"'})
    expect_status(r3, 200, "If-None-Match with another ETag")
    eq(r3.json(), r.json(), "body unchanged")
    post_seg(C, "etag", {"id": "3", "hypothesis": "The terrier bites", "translation": "The dog bites"})
    r4 = C.get(base("etag") + "/metrics", headers={"If-None-Match": etag})
    expect_status(r4, 200, "old ETag after a post")
    check(r4.header("ETag") and r4.header("ETag") != etag, "ETag did not change after a post")
    eq(r4.json()["segments"], 3, "segments after the post")
    expect_status(C.get(base("etag") + "/metrics", headers={"If-None-Match": r4.header("ETag")}),
                  304, "new ETag")


def test_bearer_token_authentication():
    srv = Server("--write-token", "W-token-123-45678", "--read-token", "R-token-456-78901")
    try:
        c = srv.client()
        W, R = "W-token-123-45678", "R-token-456-78901"
        body = {"id": "auth", "source_lang": "en", "target_lang": "en"}
        r = c.post("/v1/sessions", body)
        expect_problem(r, 401, "unauthorized", "write without a token")
        check((r.header("WWW-Authenticate") or "").lower().startswith("bearer"),
              "401 without WWW-Authenticate: Bearer (%r)" % r.header("WWW-Authenticate"))
        expect_problem(c.post("/v1/sessions", body, token=R), 403, "forbidden",
                       "write with the read token")
        r = c.post("/v1/sessions", body, token="wrong")
        check(r.status in (401, 403), "write with a wrong token: %d" % r.status)
        expect_problem(r, r.status, ("unauthorized", "forbidden"), "wrong token")
        eq(c.get("/v1/sessions", token=W).json()["total"], 0, "nothing created without W")
        expect_status(c.post("/v1/sessions", body, token=W), 201, "write with W")
        for sub in ("", "/metrics", "/segments", "/glossary", "/export"):
            r = c.get(base("auth") + sub)
            expect_problem(r, 401, "unauthorized", "read %s without a token" % sub)
            check((r.header("WWW-Authenticate") or "").lower().startswith("bearer"),
                  "401 without WWW-Authenticate")
            expect_status(c.get(base("auth") + sub, token=R), 200, "read %s with R" % sub)
            expect_status(c.get(base("auth") + sub, token=W), 200, "read %s with W" % sub)
        seg = SLIDES[0]
        expect_problem(c.post(base("auth") + "/segments", seg), 401, "unauthorized", "post")
        expect_problem(c.post(base("auth") + "/segments", seg, token=R), 403, "forbidden", "post R")
        expect_problem(c.put(base("auth") + "/glossary", [{"source": "a", "target": "b"}],
                             token=R), 403, "forbidden", "glossary with R")
        expect_problem(c.delete(base("auth"), token=R), 403, "forbidden", "DELETE with R")
        expect_problem(c.put("/v1/vocabularies/v", "3 a\n", ctype="text/plain", token=R), 403,
                       "forbidden", "vocabulary with R")
        eq(c.get(base("auth") + "/metrics", token=R).json()["segments"], 0,
           "nothing posted without W")
        expect_status(c.post(base("auth") + "/segments", seg, token=W), 201, "post with W")
        expect_status(c.post(base("auth") + "/check", {"source": "a"}, token=R), 200,
                      "check (a read) with R")
        for path in ("/healthz", "/readyz", "/metrics", "/openapi.yaml"):
            expect_status(c.get(path), 200, "%s without a token" % path)
        c.close()
        eq(srv.stop(), 0, "exit status after SIGTERM")
    finally:
        srv.kill()


# ---- other endpoints ------------------------------------------------------------------

def test_glossary_json_tsv_get_delete():
    C.create_session(id="gl")
    v0 = C.jget(base("gl") + "/glossary")
    eq([v0["count"], v0["entries"]], [0, []], "empty glossary")
    r = C.put(base("gl") + "/glossary", [{"source": "cough", "targets": ["toux", "quinte"]},
                                          {"source": "WHO", "target": "OMS", "case_sensitive": True,
                                           "id": 7},
                                          {"source": "virus", "targets": ["virii"],
                                           "forbidden": True}])
    expect_status(r, 200, "PUT JSON array")
    d = r.json()
    eq([d["session"], d["entries"]], ["gl", 3], "PUT answer")
    g = C.jget(base("gl") + "/glossary")
    eq(g["count"], 3, "count")
    eq(g["version"], d["version"], "version")
    e = {x["source"]: x for x in g["entries"]}
    eq(e["cough"]["targets"], ["toux", "quinte"], "targets")
    eq([e["WHO"]["targets"], e["WHO"]["case_sensitive"]], [["OMS"], True], "single target, case")
    eq(e["virus"]["forbidden"], True, "forbidden")
    eq(C.jget(base("gl"))["glossary"]["entries"], 3, "session.glossary.entries")
    r = C.put(base("gl") + "/glossary", {"entries": [{"source": "fever", "targets": ["fièvre"]}]})
    expect_status(r, 200, "PUT {entries}")
    check(r.json()["version"] > d["version"], "version grows")
    eq([x["source"] for x in C.jget(base("gl") + "/glossary")["entries"]], ["fever"],
       "replaced, not merged")
    r = C.put(base("gl") + "/glossary", "source\ttarget\nflu\tgrippe|influenza\nrash\téruption\n",
              ctype="text/tab-separated-values")
    expect_status(r, 200, "PUT TSV")
    eq(r.json()["entries"], 2, "TSV entries")
    g = C.jget(base("gl") + "/glossary")
    eq({x["source"]: x["targets"] for x in g["entries"]},
       {"flu": ["grippe", "influenza"], "rash": ["éruption"]}, "TSV content")
    before = snapshot(C, "gl")
    p = expect_problem(C.put(base("gl") + "/glossary", 'source,target\nok,bien\n"unterminated,x\n',
                             ctype="text/csv"), 422, "invalid-value", "bad CSV")
    check("line" in p, "problem without line: %r" % p)
    expect_problem(C.put(base("gl") + "/glossary", '[{"targets": ["x"]}]',
                         ctype="application/json"), 422, "invalid-value", "entry without source")
    same_snapshot(C, "gl", before, "bad glossaries")
    expect_status(C.delete(base("gl") + "/glossary"), 204, "DELETE glossary")
    eq(C.jget(base("gl") + "/glossary")["count"], 0, "count after DELETE")


def test_segment_get_and_timeline():
    C.create_session(id="tl", source_lang="en", target_lang="en", stopword_list=["the"])
    posted = [post_seg(C, "tl", dict(s, metadata={"n": i})) for i, s in enumerate(REPLAY)]
    g = C.jget(base("tl") + "/segments/c")
    eq([g["seq"], g["id"], g["session"]], [3, "c", "tl"], "segment c")
    eq(g["request"]["translation"], REPLAY[2]["translation"], "stored request")
    eq(g["request"]["metadata"], {"n": 2}, "stored metadata")
    eq(g["scores"], posted[2]["scores"], "stored scores")
    eq(g["totals"], posted[2]["totals"], "stored running totals")
    d = C.jget(base("tl") + "/segments?limit=2")
    eq([[x["seq"] for x in d["segments"]], d["next"], d["total"]], [[1, 2], 2, 5], "page 1")
    d = C.jget(base("tl") + "/segments?after=2&limit=2")
    eq([[x["id"] for x in d["segments"]], d["next"]], [["c", "d"], 4], "page 2")
    d = C.jget(base("tl") + "/segments?after=4&limit=2")
    eq([[x["id"] for x in d["segments"]], d["next"]], [["e"], None], "last page")
    d = C.jget(base("tl") + "/segments?after=5")
    eq([d["segments"], d["next"], d["total"]], [[], None, 5], "after the end")
    d = C.jget(base("tl") + "/segments")
    eq([x["seq"] for x in d["segments"]], [1, 2, 3, 4, 5], "default page")
    x = d["segments"][3]
    check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", x.get("created_at", "")),
          "created_at %r" % x.get("created_at"))
    eq(x["request"]["id"], "d", "timeline request")
    eq(x["scores"], posted[3]["scores"], "timeline scores")
    for q in ("after=-1", "limit=0", "limit=1001", "after=x", "limit=2.5"):
        expect_problem(C.get(base("tl") + "/segments?" + q), 400, "bad-request", q)


def test_check_terms_and_established_choice():
    C.create_session(id="chk", glossary=[
        {"source": "cough", "targets": ["toux", "quinte"]},
        {"source": "fever", "targets": ["fièvre"]},
        {"source": "virus", "targets": ["virii"], "forbidden": True}])
    # the translator uses the second alternative
    post_seg(C, "chk", {"id": "1", "source": "I have a cough", "hypothesis": "j' ai une toux",
                        "translation": "j' ai une quinte"})
    before = snapshot(C, "chk")
    etag = C.get(base("chk") + "/metrics").header("ETag")
    d = C.jpost(base("chk") + "/check", {"source": "a bad cough , fever and a virus",
                                         "hypothesis": "une mauvaise toux et un virii"}, 200)
    eq(d["session"], "chk", "session")
    t = {x["source"]: x for x in d["terms"]}
    eq(sorted(t), ["cough", "fever", "virus"], "terms found in the source")
    eq([t["cough"]["used"], t["cough"].get("used_target")], ["exact", "toux"], "cough used")
    eq(t["cough"]["translator_choices"], [{"target": "quinte", "count": 1}], "choices")
    eq(t["cough"]["established_target"], "quinte", "established choice")
    eq(t["fever"]["used"], None, "fever not used")
    eq(t["fever"]["established_target"], None, "fever has no established choice")
    eq([t["virus"]["forbidden"], t["virus"]["used"]], [True, "exact"], "forbidden term used")
    eq([d["missing_terms"], d["forbidden_used"]], [1, 1], "missing / forbidden counts")
    src = "a bad cough , fever and a virus"
    s0, s1 = t["cough"]["source_span"]
    eq(src.encode()[s0:s1], b"cough", "source_span")
    h0, h1 = t["cough"]["hypothesis_span"]
    eq("une mauvaise toux et un virii".encode()[h0:h1], b"toux", "hypothesis_span")
    d = C.jpost(base("chk") + "/check", {"source": "no terms here"}, 200)
    eq([d["terms"], d["missing_terms"], d["forbidden_used"]], [[], 0, 0], "no terms")
    same_snapshot(C, "chk", before, "POST check")
    eq(C.get(base("chk") + "/metrics").header("ETag"), etag, "ETag after check")


def utf16_span(text, span_bytes):
    """The UTF-16 code-unit offsets of a byte span of text (independent of
    the server: Python's own encoders)."""
    b = text.encode()
    a = len(b[:span_bytes[0]].decode().encode("utf-16-le")) // 2
    return [a, a + len(b[span_bytes[0]:span_bytes[1]].decode().encode("utf-16-le")) // 2]


def test_check_utf16_offsets_and_surface():
    C.create_session(id="chk16", glossary=[{"source": "cough", "targets": ["tôux"]},
                                           {"source": "dog", "targets": ["chien"]}])
    # astral characters (2 code units) and a combining accent before the terms
    src = "😀 e\u0301 a cough 🐕 and a dog"
    hyp = "🐶 e\u0301 une Tôux 😀😀 et un chien"
    d = C.jpost(base("chk16") + "/check", {"source": src, "hypothesis": hyp}, 200)
    t = {x["source"]: x for x in d["terms"]}
    for term, want_src, want_hyp in (("cough", "cough", "Tôux"), ("dog", "dog", "chien")):
        x = t[term]
        eq(x["source_span_utf16"], utf16_span(src, x["source_span"]), term + " source utf16")
        eq(x["hypothesis_span_utf16"], utf16_span(hyp, x["hypothesis_span"]), term + " hyp utf16")
        a, b = x["source_span_utf16"]
        eq(src.encode("utf-16-le")[2 * a:2 * b].decode("utf-16-le"), want_src, term + " in JS")
        a, b = x["hypothesis_span_utf16"]
        eq(hyp.encode("utf-16-le")[2 * a:2 * b].decode("utf-16-le"), want_hyp, term + " hyp JS")
        eq(x["used_surface"], want_hyp, term + " surface form as written")
    # the byte and UTF-16 offsets really differ here (astral and 2-byte chars)
    check(t["dog"]["hypothesis_span"] != t["dog"]["hypothesis_span_utf16"], "offsets differ")
    eq(t["cough"]["used_target"], "tôux", "glossary form kept in used_target")


def test_check_adaptation_signal():
    C.create_session(id="chkad", glossary=[{"source": "cough", "targets": ["toux", "quinte"]}])
    post_seg(C, "chkad", {"id": "1", "source": "a black dog coughs",
                          "hypothesis": "un chien noir", "translation": "un chien noir tousse"})
    post_seg(C, "chkad", {"id": "2", "source": "the dog has a cough",
                          "hypothesis": "le chien a une toux",
                          "translation": "le chien a une quinte"})
    before = snapshot(C, "chkad")
    etag = C.get(base("chkad") + "/metrics").header("ETag")
    hyps = {"static": "le chat a une toux", "adaptive": "le chien noir a une quinte"}
    d = C.jpost(base("chkad") + "/check", {"source": "the black dog has a cough",
                                           "hypotheses": hyps}, 200)
    ad = d["adaptation"]
    eq(sorted(ad["systems"]), ["adaptive", "static"], "one answer per system")
    # the history, independently: occ = confirmed segments containing the word
    confirmed = ["un chien noir tousse", "le chien a une quinte"]
    for name, text in hyps.items():
        a = ad["systems"][name]
        words = {w["word"]: w["occ"] for w in a["words"]}
        check(words and set(words) <= set(text.split()), name + ": words of the hypothesis")
        for w, n in words.items():
            eq(n, sum(1 for c in confirmed if w in c.split()), "%s: occ of %s" % (name, w))
        seen = sum(1 for n in words.values() if n > 0)
        eq(a["content_words"], len(words), name + " content words")
        eq(a["confirmed_words"], seen, name + " confirmed words")
        eq(a["one_shot_words"], sum(1 for n in words.values() if n == 1), name + " 1-shot")
        eq(a["reuse"], seen / len(words), name + " reuse")
        check("chien" in {w["word"] for w in ad["systems"]["adaptive"]["words"]}, "chien counted")
    eq(ad["best_system"], "adaptive", "the suggestion reusing more of the session")
    # terms per system: the translator established "quinte" for cough
    eq(ad["systems"]["adaptive"]["terms"],
       {"missing": 0, "forbidden_used": 0, "established": 1, "follows_established": 1},
       "adaptive follows the established choice")
    eq(ad["systems"]["static"]["terms"]["follows_established"], 0, "static does not")
    eq(ad["systems"]["static"]["term_items"][0]["used_target"], "toux", "static's term item")
    # the top-level answer keeps its old shape: terms of the first system
    eq(d["terms"][0]["established_target"], "quinte", "established target")
    eq(d["terms"][0]["used_target"], "quinte", "top-level terms: first system (adaptive)")
    # single hypothesis: system "default"; no hypothesis: no systems
    d = C.jpost(base("chkad") + "/check", {"source": "a dog", "hypothesis": "un chien"}, 200)
    eq(d["adaptation"]["systems"]["default"]["words"], [{"word": "chien", "occ": 2}], "default")
    d = C.jpost(base("chkad") + "/check", {"source": "a dog"}, 200)
    eq([d["adaptation"]["systems"], d["adaptation"]["best_system"]], [{}, None], "no hypothesis")
    # a tie names no best system
    d = C.jpost(base("chkad") + "/check", {"source": "a dog",
                                           "hypotheses": {"x": "chien", "y": "noir"}}, 200)
    eq(d["adaptation"]["best_system"], None, "tie")
    for bad in ({"source": "a", "hypothesis": "b", "hypotheses": {"x": "c"}},
                {"source": "a", "hypotheses": {}}, {"source": "a", "hypotheses": {"a b": "c"}},
                {"source": "a", "hypotheses": {"x": 1}}, {"source": "a", "hypotheses": ["x"]}):
        expect_problem(C.post(base("chkad") + "/check", bad), 422, "invalid-value", repr(bad))
    same_snapshot(C, "chkad", before, "POST check with hypotheses")
    eq(C.get(base("chkad") + "/metrics").header("ETag"), etag, "ETag after check")


def test_glossary_csv_language_header():
    C.create_session(id="glh", source_lang="en-US", target_lang="fr")
    for head, rows in (("English,French", "cat,le chat\ndog,chien\n"),
                       ("en-US,fr-FR", "cat,le chat\ndog,chien\n"),
                       ("fr,en", "le chat,cat\nchien,dog\n")):
        r = C.put(base("glh") + "/glossary", (head + "\n" + rows).encode(), ctype="text/csv")
        expect_status(r, 200, "PUT glossary with header " + head)
        eq(r.json()["entries"], 2, head + ": the header is no term entry")
        got = C.jget(base("glh") + "/glossary")["entries"]
        eq([(e["source"], e["targets"]) for e in got],
           [("cat", ["le chat"]), ("dog", ["chien"])], head + ": columns mapped by language")
    before = C.jget(base("glh") + "/glossary")
    expect_problem(C.put(base("glh") + "/glossary", b"de,es\nKatze,gato\n", ctype="text/csv"),
                   422, "invalid-value", "languages the session does not have")
    eq(C.jget(base("glh") + "/glossary"), before, "a refused glossary changes nothing")
    r = C.put(base("glh") + "/glossary", b"cat,chat\n", ctype="text/csv")
    expect_status(r, 200, "a term pair as first row")
    eq(r.json()["entries"], 1, "a first row that is a term pair stays one")


def test_export_csv_json_tmx():
    C.create_session(id="exp", source_lang="en", target_lang="fr",
                     options={"baseline_system": "base"})
    rows = [("s1", "the cat, the dog", "le chat , le chien", 'le "chat" , le chien'),
            ("s2", "a <b> & c", "a <b> & c", "a < b > & c"),
            ("s3", "line\nbreak", "saut\nde ligne", "saut de ligne"),
            ("s4", "the dog", "le chien", "le chien")]
    for sid, src, hyp, tr in rows:
        post_seg(C, "exp", {"id": sid, "source": src, "translation": tr,
                            "hypotheses": {"base": hyp, "adapt": tr}})
    m = metrics(C, "exp")
    tl = timeline(C, "exp")
    # CSV
    r = C.get(base("exp") + "/export?format=csv")
    expect_status(r, 200, "CSV")
    eq(r.content_type, "text/csv", "CSV Content-Type")
    recs = list(csv.DictReader(io.StringIO(r.body.decode("utf-8"), newline="")))
    eq(len(recs), len(rows) * 2, "CSV rows (segments × systems)")
    for col in ("seq", "id", "system", "r0_hits", "r0_total", "r1_hits", "r1_total", "bleu",
                "source", "hypothesis", "translation"):
        check(col in recs[0], "CSV lacks column %s" % col)
    for system in ("base", "adapt"):
        sub = [x for x in recs if x["system"] == system]
        eq([x["id"] for x in sub], [x[0] for x in rows], "CSV ids of %s" % system)
        for k in ("r0", "r1", "r01"):
            eq([sum(int(x[k + "_hits"]) for x in sub), sum(int(x[k + "_total"]) for x in sub)],
               count(m["systems"][system][k]), "CSV %s sums of %s" % (k, system))
        eq([x["translation"] for x in sub], [x[3] for x in rows], "CSV translations")
        eq([x["source"] for x in sub], [x[1] for x in rows], "CSV sources")
    eq([x["hypothesis"] for x in recs if x["system"] == "base"], [x[2] for x in rows],
       "CSV hypotheses")
    for x in recs:
        seg = tl[int(x["seq"]) - 1]
        eq(seg["id"], x["id"], "CSV seq/id")
        exp = seg["scores"]["systems"][x["system"]]["bleu"]
        eq(float(x["bleu"]) if x["bleu"] != "" else None, exp, "CSV bleu of %s" % x["id"])
    # JSON
    r = C.get(base("exp") + "/export?format=json")
    expect_status(r, 200, "JSON export")
    eq(r.content_type, "application/json", "JSON Content-Type")
    d = r.json()
    eq(d["count"], len(rows), "JSON count")
    eq([s["id"] for s in d["segments"]], [x[0] for x in rows], "JSON ids")
    eq([s["request"]["translation"] for s in d["segments"]], [x[3] for x in rows], "JSON text")
    eq(d["session"]["id"], "exp", "JSON session")
    eq(C.jget(base("exp") + "/export"), d, "json is the default format")
    # TMX
    r = C.get(base("exp") + "/export?format=tmx")
    expect_status(r, 200, "TMX")
    eq(r.content_type, "application/x-tmx+xml", "TMX Content-Type")
    root = ET.fromstring(r.body)
    eq(root.tag, "tmx", "root")
    eq(root.get("version"), "1.4", "TMX version")
    tus = root.findall("./body/tu")
    eq(len(tus), len(rows), "TMX units")
    xl = "{http://www.w3.org/XML/1998/namespace}lang"
    for tu, (sid, src, _hyp, tr) in zip(tus, rows):
        eq(tu.get("tuid"), sid, "tuid")
        segs = {tuv.get(xl): tuv.find("seg").text for tuv in tu.findall("tuv")}
        eq(segs, {"en": src, "fr": tr}, "TMX tuv of %s" % sid)
    expect_problem(C.get(base("exp") + "/export?format=xml"), 400, "bad-request", "format=xml")


def test_background_vocabulary_novel_words():
    r = C.put("/v1/vocabularies/bg1", "100 bites\n", ctype="text/plain")
    expect_status(r, 201, "PUT new vocabulary")
    eq([r.json()["name"], r.json()["words"]], ["bg1", 1], "PUT answer")
    r = C.put("/v1/vocabularies/bg1", "100 bites\n3 terrier\n", ctype="text/plain")
    expect_status(r, 200, "PUT replaces")
    eq(r.json()["words"], 2, "words")
    v = C.jget("/v1/vocabularies/bg1")
    eq([v["name"], v["words"]], ["bg1", 2], "GET vocabulary")
    check("created_at" in v, "created_at")
    # rare_threshold 5: "bites" (100) is not novel, "terrier" (3) and unseen words are
    res = slides_session(C, "novel", options={"background_vocabulary": "bg1", "rare_threshold": 5})
    t = res[-1]["totals"]["default"]
    full = slides_session(C, "novel-ref")[-1]["totals"]["default"]
    eq([count(t["r0"]), count(t["r1"])], [[1, 3], [1, 1]], "novel-word totals")
    check(t["r01"]["total"] < full["r01"]["total"], "the novel-word variant counts fewer words")
    eq(C.jget(base("novel"))["options"]["background_vocabulary"], "bg1", "session option")
    # errors
    n = session_total(C)
    expect_problem(C.post("/v1/sessions", {"source_lang": "en", "target_lang": "en",
                                           "options": {"background_vocabulary": "nope"}}),
                   422, "invalid-value", "unknown vocabulary")
    eq(session_total(C), n, "no session created")
    p = expect_problem(C.put("/v1/vocabularies/bg2", "3 a\nnot-a-count\n", ctype="text/plain"),
                       422, "invalid-value", "bad line")
    eq(p.get("line"), 2, "problem.line")
    expect_problem(C.get("/v1/vocabularies/bg2"), 404, "not-found", "bad vocabulary not stored")
    expect_status(C.put("/v1/vocabularies/tmp", "1 x\n", ctype="text/plain"), 201, "PUT tmp")
    expect_status(C.delete("/v1/vocabularies/tmp"), 204, "DELETE")
    expect_problem(C.get("/v1/vocabularies/tmp"), 404, "not-found", "GET after DELETE")
    expect_problem(C.delete("/v1/vocabularies/tmp"), 404, "not-found", "DELETE again")



# ---- chrF and TER options (issue 24) ------------------------------------------------

def _ml_session(sid, target, folder, hyp, ref, src, options):
    """A session over a data/multilingual set (one segment per line) with the
    given options; returns (session, /metrics)."""
    d = os.path.join(DATA, "multilingual", folder)
    lines = {}
    for name in (hyp, ref, src):
        with open(os.path.join(d, name), encoding="utf-8") as f:
            lines[name] = f.read().split("\n")[:-1]
    s = C.create_session(id=sid, source_lang="en", target_lang=target, options=options)
    segs = [{"id": str(i + 1), "source": lines[src][i], "translation": lines[ref][i],
             "hypothesis": lines[hyp][i]} for i in range(len(lines[hyp]))]
    post_all(C, sid, segs, system="mt")
    return C.jget(base(sid)), metrics(C, sid)


def _ml_golden(case_id):
    with open(os.path.join(DATA, "golden", "multilingual.json"), encoding="utf-8") as f:
        g = json.load(f)
    return next(c for c in g["corpus"] if c["id"] == case_id)["score"]


def test_zh_session_ter_normalized_asian_by_default():
    # unsegmented Chinese MT output against a segmented post-edit: sacreBLEU's
    # default TER is 86.6 (every sentence nearly one word); a zh session runs
    # TER normalized with Asian support, as `sacrebleu --ter-normalized
    # --ter-asian-support` does, and says so
    s, m = _ml_session("ml-zh", "zh", "mlqepe-en-zh", "mt.zh", "pe.tok.zh", "src.en", {})
    eq([s["options"].get("ter_normalized"), s["options"].get("ter_asian_support"),
        s["options"].get("ter_no_punct")], [True, True, False], "zh session TER options")
    check("|ter:norm,asian" in s["signature"], "signature %r" % s["signature"])
    want = _ml_golden("mlqepe-en-zh-raw/1ref/ter/normalized/asian")
    t = m["systems"]["mt"]["ter"]
    check(t is not None and abs(t - want) < 1e-9, "zh TER %r, sacreBLEU %r" % (t, want))
    # an explicit choice wins: sacreBLEU's default TER
    s, m = _ml_session("ml-zh-plain", "zh", "mlqepe-en-zh", "mt.zh", "pe.tok.zh", "src.en",
                       {"ter_normalized": False})
    eq(s["options"].get("ter_asian_support"), False, "explicit ter_normalized false")
    want = _ml_golden("mlqepe-en-zh-raw/1ref/ter")
    t = m["systems"]["mt"]["ter"]
    check(t is not None and abs(t - want) < 1e-9, "zh plain TER %r, sacreBLEU %r" % (t, want))


def test_chrf_ter_session_options_equal_sacrebleu():
    opts = {"chrf_word_order": 2, "chrf_whitespace": True, "ter_no_punct": True}
    s, m = _ml_session("ml-de", "de", "mlqepe-en-de", "mt.de", "pe.de", "src.en", opts)
    for k, v in opts.items():
        eq(s["options"].get(k), v, "echoed option " + k)
    eq(s["options"].get("ter_normalized"), False, "de session: sacreBLEU's TER default")
    check("|ter:nopunct" in s["signature"] and "|chrf:nw2,space" in s["signature"],
          "signature %r" % s["signature"])
    t = m["systems"]["mt"]
    for key, case in (("chrf", "mlqepe-en-de/1ref/chrf2++/whitespace"),
                      ("chrfpp", "mlqepe-en-de/1ref/chrf2++/whitespace"),
                      ("ter", "mlqepe-en-de/1ref/ter/no-punct")):
        want = _ml_golden(case)
        check(t[key] is not None and abs(t[key] - want) < 1e-9,
              "%s: got %r, sacreBLEU %r (%s)" % (key, t[key], want, case))
    r = C.post("/v1/sessions", {"source_lang": "en", "target_lang": "de",
                                "options": {"chrf_char_order": 0, "chrf_word_order": 0}})
    expect_problem(r, 422, None, "chrF with no order")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))


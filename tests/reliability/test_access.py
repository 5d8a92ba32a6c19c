#!/usr/bin/env python3
"""Access control and isolation, for every route of server/api/routes.c (parsed
from the source, so a new route is covered the day it is added):

  * with --write-token W --read-token R: every write route (AM_AUTH_WRITE)
    answers 401 without a token, 401/403 with a wrong one and 403 with R, and the
    refused writes change nothing in the database; every read route
    (AM_AUTH_READ) answers 401 without a token and is served with R and
    with W; open routes (AM_AUTH_NONE) need no token;
  * no route leaks another session's data: a segment id of session A under
    session B is 404 (GET and PUT), B's timeline, export, metrics and
    vocabulary hold nothing of A;
  * ids are validated everywhere: every {id}, {sid} and {name} parameter
    with a character outside [A-Za-z0-9._-] or longer than 128 is refused
    with 400 or 404 (never served, never a 5xx), and 128 characters are fine.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS, ROOT, db_dump, raw, scale  # noqa: E402
from harness import Server, check, eq, expect_status, run_tests  # noqa: E402

W = "write-secret-0123456789"
R = "read-secret-9876543210"
SEG = {"id": "s1", "source": "the virus spreads", "hypothesis": "le virus se propage",
       "translation": "le virus se propage"}


def routes():
    """[(method, path, access)] from server/api/routes.c."""
    with open(os.path.join(ROOT, "server", "api", "routes.c"), encoding="utf-8") as f:
        text = f.read()
    out = re.findall(r'\{\s*"([A-Z]+)",\s*"([^"]+)",\s*\w+,\s*AM_AUTH_(NONE|READ|WRITE)\s*(?:,\s*[01]\s*)?\}',
                     text)
    check(len(out) >= 20, "routes parsed from server/api/routes.c: %d" % len(out))
    return out


def fill(path, sess="a", seg="s1", name="bg", word="virus", file="index.html"):
    return (path.replace("{id}", sess).replace("{sid}", seg).replace("{name}", name)
            .replace("{word}", word).replace("{file}", file))


def body_for(method, path):
    """A body that would be valid for the route (so only access decides)."""
    if path.endswith("/glossary"):
        return b"source,target\nvirus,virus\n", "text/csv"
    if path.startswith("/v1/vocabularies/"):
        return b"3 virus\n", "text/plain"
    if path == "/v1/sessions":
        return json.dumps({"id": "new", "source_lang": "en", "target_lang": "fr"}).encode(), \
            "application/json"
    if path.endswith("/check"):
        return json.dumps({"source": "the virus"}).encode(), "application/json"
    if "/segments" in path:
        b = dict(SEG, id="s2" if method == "POST" else "s1", translation="autre chose")
        return json.dumps(b).encode(), "application/json"
    return b"", None


def send(port, method, path, token=None, body=None, ctype=None):
    h = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1", "Connection: close"]
    if token is not None:
        h.append("Authorization: Bearer " + token)
    if ctype:
        h.append("Content-Type: " + ctype)
    if method in ("POST", "PUT"):
        h.append("Content-Length: %d" % len(body or b""))
    data = ("\r\n".join(h) + "\r\n\r\n").encode() + (body or b"")
    # the event stream never ends: read its head only
    st, _h, b, _c = raw(port, data, timeout=1.5 if path.endswith("/events") else scale(10, 60))
    return st, b


def populate(srv, token):
    c = srv.client(token)
    for sid in ("a", "b"):
        c.create_session(id=sid, options=dict(OPTIONS))
    expect_status(c.post("/v1/sessions/a/segments", SEG), 201, "segment of a")
    expect_status(c.post("/v1/sessions/b/segments",
                         {"id": "only-b", "hypothesis": "un masque", "translation": "un masque"}),
                  201, "segment of b")
    expect_status(c.put("/v1/vocabularies/bg", "3 virus\n", ctype="text/plain"), (200, 201),
                  "vocabulary")
    c.close()


def test_tokens_on_every_route():
    table = routes()
    srv = Server("--write-token", W, "--read-token", R)
    try:
        populate(srv, W)
        eq(srv.stop(), 0, "exit status")
        before = db_dump(srv.db)
        srv.start()
        bad = []
        for method, path, access in table:
            url = fill(path)
            body, ctype = body_for(method, path)
            if access == "WRITE":
                # a wrong token: 401 or 403 (tests/api/test_api.py accepts both)
                for tok, want in ((None, (401,)), ("wrong-token", (401, 403)), (R, (403,))):
                    st, b = send(srv.port, method, url, tok, body, ctype)
                    if st not in want:
                        bad.append("%s %s token=%s: %s (expected %r) %r"
                                   % (method, url, tok, st, want, b[:120]))
            elif access == "READ":
                st, b = send(srv.port, method, url, None, body, ctype)
                if st != 401:
                    bad.append("%s %s without token: %s (expected 401)" % (method, url, st))
                for tok in (R, W):
                    st, b = send(srv.port, method, url, tok, body, ctype)
                    if st is None or st in (401, 403) or st >= 500:
                        bad.append("%s %s token=%s: %s (expected it served) %r"
                                   % (method, url, tok[:5], st, b[:120]))
            else:
                st, b = send(srv.port, method, url, None, body, ctype)
                if st is None or st in (401, 403) or st >= 500:
                    bad.append("%s %s open route: %s %r" % (method, url, st, b[:120]))
        eq(srv.stop(), 0, "exit status")
        after = db_dump(srv.db)
        for t in sorted(set(before) | set(after)):
            eq(after.get(t), before.get(t), "table %s after refused writes and reads" % t)
        check(not bad, "%d access violations:\n  %s" % (len(bad), "\n  ".join(bad)))
        print("# %d routes checked" % len(table))
    finally:
        srv.kill()


def test_no_route_leaks_another_session():
    srv = Server()
    try:
        populate(srv, None)
        c = srv.client()
        for m, path, body in (("GET", "/v1/sessions/b/segments/s1", None),
                              ("DELETE", "/v1/sessions/b/segments/s1", None),
                              ("GET", "/v1/sessions/a/segments/only-b", None)):
            r = c.request(m, path, body)
            eq(r.status, 404, "%s %s (a segment of the other session)" % (m, path))
        ids_b = [x["id"] for x in c.jget("/v1/sessions/b/segments")["segments"]]
        eq(ids_b, ["only-b"], "timeline of b")
        eq(c.jget("/v1/sessions/b/metrics")["segments"], 1, "metrics of b")
        exp = c.get("/v1/sessions/b/export?format=json")
        expect_status(exp, 200, "export of b")
        check(b"s1" not in exp.body and b"virus" not in exp.body,
              "export of b holds data of a: %r" % exp.body[:300])
        r = c.get("/v1/sessions/b/vocabulary/virus")
        if r.status == 200:
            d = r.json()
            check(not re.search(r'"seq":\s*1\b.*"s1"|"id":\s*"s1"', r.text),
                  "vocabulary of b shows a's segment: %r" % d)
            check(json.dumps(d).count("only-b") == 0, "word history of b")
        else:
            eq(r.status, 404, "a word only session a has, asked under b")
        eq(c.jget("/v1/sessions/a/segments")["segments"][0]["id"], "s1", "a unchanged")
        # a PUT of a's segment id into b is an upsert into b: it creates b's own
        # segment and leaves a's as it was
        a_s1 = c.jget("/v1/sessions/a/segments/s1")
        other = dict(SEG, translation=SEG["translation"] + " b")
        expect_status(c.put("/v1/sessions/b/segments/s1", other), 201, "PUT s1 into b (upsert)")
        eq(c.jget("/v1/sessions/a/segments/s1"), a_s1, "a's segment s1 after the upsert into b")
        eq(c.jget("/v1/sessions/b/segments/s1")["request"]["translation"], other["translation"],
           "b's own s1")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_ids_validated_on_every_route():
    table = routes()
    srv = Server()
    try:
        populate(srv, None)
        bad = []
        invalid = ["a%20b", "x'%20OR%20'1'='1", "..", "%2e%2e%2fetc", "a%2Fb", "caf%C3%A9",
                   "x" * 129, "%00", "a;b", "a%22b"]
        checked = 0
        for method, path, access in table:
            params = [p for p in ("{id}", "{sid}", "{name}") if p in path]
            for p in params:
                for v in invalid:
                    url = fill(path, **{{"{id}": "sess", "{sid}": "seg", "{name}": "name"}[p]: v})
                    body, ctype = body_for(method, path)
                    st, b = send(srv.port, method, url, None, body, ctype)
                    checked += 1
                    if st not in (400, 404):
                        bad.append("%s %s: %s %r" % (method, url[:80], st, b[:120]))
        # 128 characters of the allowed alphabet are a valid id
        c = srv.client()
        long_id = ("Az09._-" * 19)[:128]
        c.create_session(id=long_id, options=dict(OPTIONS))
        expect_status(c.post("/v1/sessions/%s/segments" % long_id, dict(SEG, id=long_id)), 201,
                      "128-character ids")
        expect_status(c.get("/v1/sessions/%s/segments/%s" % (long_id, long_id)), 200,
                      "GET with 128-character ids")
        c.close()
        eq(srv.stop(), 0, "exit status")
        check(not bad, "%d of %d invalid ids not refused:\n  %s" % (len(bad), checked,
                                                                    "\n  ".join(bad)))
        print("# %d invalid-id requests refused" % checked)
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))

#!/usr/bin/env python3
"""Hostile input: a table of malformed and malicious requests sent on raw
sockets, each expecting a given 4xx status (or, for clients that never finish,
that the server drops the connection after --conn-timeout). After every
request the server must still answer /healthz; at the end, with the server
stopped, every table of the database file (python sqlite3) must be exactly as
it was before the first hostile request.

The bodies are built so that no reading of them could be a valid request
(ids with forbidden characters, missing translations, …): a request that
slipped through a framing trick would still not change the database, but it
would answer with another status and fail its row.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS, db_dump, problem_type, raw, scale  # noqa: E402
from harness import Server, check, eq, run_tests, tico19  # noqa: E402

CONN_TIMEOUT = 2
SEG = "/v1/sessions/h/segments"
DROP = "drop"   # the server closes the connection without an answer (or answers 408)


def req(method, path, body=b"", ctype="application/json", headers=(), length=True):
    if isinstance(body, str):
        body = body.encode("utf-8")
    h = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1"]
    if ctype is not None:
        h.append("Content-Type: " + ctype)
    if length and method in ("POST", "PUT"):
        h.append("Content-Length: %d" % len(body))
    h += list(headers)
    h.append("Connection: close")
    return ("\r\n".join(h) + "\r\n\r\n").encode("latin-1", "replace") + body


def seg(**kw):
    b = {"id": "hostile", "hypothesis": "a", "translation": "b"}
    b.update(kw)
    return json.dumps(b)


def chunked(*chunks):
    out = b""
    for c in chunks:
        out += b"%x\r\n%s\r\n" % (len(c), c)
    return out + b"0\r\n\r\n"


def cases():
    """(name, request bytes or list of chunks, expected statuses, expected
    problem slug or None). Statuses: a tuple of acceptable codes, or DROP."""
    big_nest = "[" * 100000 + "]" * 100000
    obj_nest = '{"a":' * 5000 + "1" + "}" * 5000
    c = []
    add = c.append
    # -- malformed JSON
    add(("truncated JSON", req("POST", SEG, '{"id":"x","translation":'), (400,), "bad-json"))
    add(("trailing garbage", req("POST", SEG, seg() + " x"), (400,), "bad-json"))
    add(("single quotes", req("POST", SEG, "{'id': 'x'}"), (400,), "bad-json"))
    add(("empty body", req("POST", SEG, ""), (400,), "bad-json"))
    add(("100000 nested arrays", req("POST", SEG, '{"id":"x","metadata":%s}' % big_nest),
         (400,), "bad-json"))
    add(("5000 nested objects", req("POST", SEG, '{"id":"x","metadata":%s}' % obj_nest),
         (400,), "bad-json"))
    add(("duplicate keys", req("POST", SEG, '{"id":"a","id":"b","hypothesis":"a"}'), (400,),
         "bad-json"))
    add(("raw NUL byte", req("POST", SEG, b'{"id":"x\x00","hypothesis":"a"}'), (400,), "bad-json"))
    add(("lone surrogate escape", req("POST", SEG, '{"id":"x","hypothesis":"\\ud800"}'), (400,),
         "bad-json"))
    # -- wrong types, huge numbers, unknown fields
    # an array is a batch (issue 13 §3): 200, its first item refused with 422,
    # the rest not attempted, nothing stored (the tables are compared after)
    add(("array of non-objects", req("POST", SEG, "[1,2]"), (200,), None))
    # jansson (without JSON_DECODE_ANY) refuses a bare string at the top level
    add(("string body", req("POST", SEG, '"x"'), (400, 422), None))
    add(("id is a number", req("POST", SEG, seg(id=7)), (422,), "invalid-value"))
    add(("hypothesis is an object", req("POST", SEG, seg(hypothesis={"a": 1})), (422,),
         "invalid-value"))
    add(("translation is null", req("POST", SEG, seg(translation=None)), (422,), None))
    add(("huge real", req("POST", SEG, '{"id":"x","hypothesis":"a","metadata":1e999999}'),
         (400,), "bad-json"))
    add(("huge integer id", req("POST", SEG, '{"id":123456789012345678901234567890}'), (400,),
         "bad-json"))
    add(("unknown field", req("POST", SEG, seg(colour="red", id="x'")), (422,), None))
    add(("overlong field name", req("POST", SEG, seg(**{"k" * 100000: 1})), (422,),
         "unknown-field"))
    # -- text content
    add(("invalid UTF-8", req("POST", SEG, b'{"id":"x","hypothesis":"\xc3\x28","translation":"b"}'),
         (422,), "invalid-utf8"))
    add(("overlong UTF-8 slash", req("POST", SEG, b'{"id":"\xc0\xaf","hypothesis":"a"}'), (422,),
         "invalid-utf8"))
    add(("UTF-8 surrogate", req("POST", SEG, b'{"id":"x","translation":"\xed\xa0\x80"}'), (422,),
         "invalid-utf8"))
    add(("escaped NUL in text", req("POST", SEG, seg(translation="b\u0000c", id="x/")), (422,),
         None))
    add(("10001 tokens", req("POST", SEG, seg(id="x/", translation="w " * 10001)), (422,), None))
    # -- ids: SQL and path injection, length
    for bad in ("x' OR '1'='1", "../etc/passwd", "%2e%2e%2f", "a b", "x;DROP TABLE segments",
                "i" * 129, "", "caf\u00e9"):
        add(("body id %r" % bad[:20], req("POST", SEG, seg(id=bad)), (422,), "invalid-value"))
    add(("session id SQL injection", req("POST", "/v1/sessions",
                                         json.dumps({"id": "x' OR '1'='1", "source_lang": "en",
                                                     "target_lang": "fr"})), (422,),
         "invalid-value"))
    for path in ("/v1/sessions/x'%20OR%20'1'='1/segments", "/v1/sessions/..%2f..%2fetc%2fpasswd",
                 "/v1/sessions/h/segments/%2e%2e%2f", "/v1/sessions/h/segments/..%2F..%2Fx",
                 "/v1/sessions/" + "s" * 129, "/v1/sessions/h/segments/" + "i" * 129,
                 "/v1/sessions/%ff%fe", "/v1/sessions/h%00x", "/v1/vocabularies/..%2fdb"):
        add(("GET %s" % path[:40], req("GET", path, ctype=None), (400, 404), None))
    add(("very long path", req("GET", "/v1/sessions/" + "s" * 20000, ctype=None),
         (400, 404, 414, 431), None))
    add(("PUT vocabulary ../", req("PUT", "/v1/vocabularies/..%2f..%2fx", "3 a\n",
                                   ctype="text/plain"), (400, 404), None))
    # -- header abuse
    add(("huge header", req("GET", "/v1/sessions", ctype=None, headers=["X-Pad: " + "p" * 200000]),
         (400, 413, 431), None))
    add(("10000 headers", req("GET", "/v1/sessions", ctype=None,
                              headers=["X-H%d: v" % i for i in range(10000)]),
         (400, 413, 431), None))
    add(("two different Content-Length", req("POST", SEG, seg(id="x/"), length=False,
                                             headers=["Content-Length: 5",
                                                      "Content-Length: %d" % len(seg(id="x/"))]),
         (400,), None))
    add(("Content-Length not a number", req("POST", SEG, seg(id="x/"), length=False,
                                            headers=["Content-Length: abc"]), (400,), None))
    add(("negative Content-Length", req("POST", SEG, seg(id="x/"), length=False,
                                        headers=["Content-Length: -1"]), (400,), None))
    add(("20-digit Content-Length", req("POST", SEG, seg(id="x/"), length=False,
                                        headers=["Content-Length: 99999999999999999999"]),
         (400, 413), None))
    add(("Content-Length and chunked", req("POST", SEG, chunked(seg(id="x/").encode()),
                                           length=False,
                                           headers=["Content-Length: 4",
                                                    "Transfer-Encoding: chunked"]),
         (400, 422), None))
    add(("bad chunk size", req("POST", SEG, b"zz\r\nabc\r\n0\r\n\r\n", length=False,
                               headers=["Transfer-Encoding: chunked"]), (400,), None))
    add(("huge chunk size", req("POST", SEG, b"ffffffffffffffff\r\nabc\r\n", length=False,
                                headers=["Transfer-Encoding: chunked"]), (400, 413, DROP), None))
    add(("chunked body over max-body", req("POST", SEG, chunked(*[b"x" * 65536] * 20),
                                           length=False, headers=["Transfer-Encoding: chunked"]),
         (413,), "payload-too-large"))
    add(("Transfer-Encoding gzip", req("POST", SEG, seg(id="x/"), length=False,
                                       headers=["Transfer-Encoding: gzip"]),
         (400, 411, 415, 501, DROP), None))
    add(("10 MB body", req("POST", SEG, b'{"id":"' + b"x" * (10 << 20) + b'"}'), (413,),
         "payload-too-large"))
    add(("Expect 100-continue, 10 MB", req("POST", SEG, b"", length=False,
                                            headers=["Content-Length: %d" % (10 << 20),
                                                     "Expect: 100-continue"]), (413,),
         "payload-too-large"))
    add(("request line garbage", b"GARBAGE\r\n\r\n", (400, DROP), None))
    add(("HTTP/0.9 request", b"GET /\r\n\r\n", (400,) + (DROP,), None))
    add(("header without colon", req("GET", "/v1/sessions", ctype=None,
                                     headers=["NoColonHere"]), (400,), None))
    # -- content types and methods
    add(("text/plain segment", req("POST", SEG, seg(id="x/"), ctype="text/plain"), (415,),
         "unsupported-media-type"))
    # documented (server/http/http.c): a body without Content-Type is not read as JSON
    add(("no Content-Type", req("POST", SEG, seg(id="x/"), ctype=None), (415,),
         "unsupported-media-type"))
    add(("JSON with charset latin-1", req("POST", SEG, seg(id="x/"),
                                         ctype="application/json; charset=iso-8859-1"),
         (415,), "unsupported-media-type"))
    add(("multipart segment", req("POST", SEG, seg(id="x/"),
                                  ctype="multipart/form-data; boundary=x"), (415,),
         "unsupported-media-type"))
    add(("PATCH segments", req("PATCH", SEG, seg(id="x/")), (405,), None))
    # -- glossaries
    add(("unterminated CSV glossary", req("PUT", "/v1/sessions/h/glossary",
                                          'source,target\n"abc,def\n', ctype="text/csv"),
         (422,), None))
    add(("TBX with external entity", req("PUT", "/v1/sessions/h/glossary",
                                         '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x SYSTEM '
                                         '"file:///etc/passwd">]><martif><text><body><termEntry>'
                                         '<langSet xml:lang="en"><tig><term>&x;</term></tig>'
                                         '</langSet></termEntry></body></text></martif>',
                                         ctype="application/x-tbx"), (400, 422), None))
    # -- slow clients (dropped by --conn-timeout)
    head = req("POST", SEG, seg(id="x/"))
    add(("body never finished", [head[:-10]], DROP, None))
    add(("headers never finished", [b"POST /v1/sessions/h/segments HTTP/1.1\r\nHost: 127.0.0.1\r\n"],
         DROP, None))
    # a byte every 0.5 s, then silence: the idle timeout closes it
    add(("slowloris, then silence", [bytes([b]) for b in b"GET /healthz HTTP/1.1\r\nH"][:8],
         DROP, None))
    return c


def populate(c):
    c.create_session(id="h", options=dict(OPTIONS))
    for s in tico19()[:5]:
        r = c.post(SEG, {"id": s["id"], "source": s["source"], "hypothesis": s["hypothesis"],
                         "translation": s["translation"]})
        eq(r.status, 201, "populate")
    r = c.put("/v1/sessions/h/glossary", "source,target\nvirus,virus\n", ctype="text/csv")
    check(r.status in (200, 201), "glossary: %r" % r)
    r = c.put("/v1/vocabularies/bg", "3 a\n2 b\n", ctype="text/plain")
    check(r.status in (200, 201), "vocabulary: %r" % r)


def test_hostile_requests_are_refused_and_change_nothing():
    table = cases()
    check(len(table) >= 40, "at least 40 hostile requests (%d)" % len(table))
    srv = Server("--conn-timeout", str(CONN_TIMEOUT), "--max-body", "1MiB")
    try:
        c = srv.client()
        populate(c)
        c.close()
        eq(srv.stop(), 0, "exit status")
        before = db_dump(srv.db)
        check(len(before.get("segments", [])) == 5, "5 segments stored before")
        srv.start()
        failures = []
        for name, data, want, slug in table:
            slow = isinstance(data, list)
            t0 = time.monotonic()
            try:
                if slow:
                    st, _h, body, closed = raw(srv.port, None, chunks=data, pause=0.5
                                               if len(data) > 1 else 0,
                                               timeout=CONN_TIMEOUT + scale(6, 30))
                else:
                    st, _h, body, closed = raw(srv.port, data, timeout=scale(15, 90))
            except OSError as e:
                st, body, closed = None, b"", True
                print("# %s: %r" % (name, e))
            took = time.monotonic() - t0
            if want == DROP:
                ok = (st is None or st == 408) and closed
            else:
                ok = st in want or (st is None and closed and DROP in want)
                if ok and slug is not None and st is not None:
                    ok = problem_type(body) == slug
            line = "%-6s %-40s -> %s%s (%.1fs)" % ("ok" if ok else "WRONG", name[:40],
                                                  st if st is not None else "dropped",
                                                  " " + str(problem_type(body)) if st else "",
                                                  took)
            print("# " + line)
            if not ok:
                failures.append("%s: got %s %r, expected %r %s" % (name, st, body[:160], want,
                                                                   slug or ""))
            if srv.proc.poll() is not None:
                raise AssertionError("the server died on %r:\n%s" % (name, srv.logs()))
            r = srv.client()
            hz = r.get("/healthz")
            r.close()
            if hz.status != 200:
                raise AssertionError("/healthz after %r: %r" % (name, hz))
        eq(srv.stop(), 0, "exit status after the hostile requests")
        after = db_dump(srv.db)
        for t in sorted(set(before) | set(after)):
            eq(after.get(t), before.get(t), "table %s after the hostile requests" % t)
        check(not failures, "%d of %d hostile requests answered wrongly:\n  %s"
              % (len(failures), len(table), "\n  ".join(failures)))
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))

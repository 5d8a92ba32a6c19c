#!/usr/bin/env python3
"""Benchmark helper for bench/run.sh (talks to 127.0.0.1 only).

  sessions.py create PORT PREFIX N [GLOSSARY.csv]  create sessions PREFIX0..N-1 (en->fr,
                                                  standard profile: all metrics) with the glossary
  sessions.py post1 PORT PREFIX N                 post one segment to each session
  sessions.py etags PORT PREFIX N OUT.lua         ETag of each session's metrics, as a Lua table
  sessions.py lat PORT SESSION COUNT              sequential POSTs to one session, prints the
                                                  latency (ms) of each, one a line
"""
import http.client, json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tico  # noqa: E402


def conn(port):
    return http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)


def req(c, method, path, body=None, ctype="application/json"):
    hdr = {"Content-Type": ctype} if body is not None else {}
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8")
    c.request(method, path, body=body, headers=hdr)
    r = c.getresponse()
    data = r.read()
    return r.status, r, data


def main():
    cmd, port = sys.argv[1], sys.argv[2]
    c = conn(port)
    if cmd == "create":
        prefix, n = sys.argv[3], int(sys.argv[4])
        gl = open(sys.argv[5], encoding="utf-8").read() if len(sys.argv) > 5 else None
        for i in range(n):
            sid = "%s%d" % (prefix, i)
            st, _, d = req(c, "POST", "/v1/sessions", {"id": sid, "source_lang": "en", "target_lang": "fr"})
            assert st == 201, (st, d)
            if gl:
                st, _, d = req(c, "PUT", "/v1/sessions/%s/glossary" % sid, gl, "text/csv")
                assert st == 200, (st, d)
    elif cmd == "post1":
        prefix, n = sys.argv[3], int(sys.argv[4])
        segs = tico.segments()
        for i in range(n):
            s, h, r = segs[i % len(segs)]
            st, _, d = req(c, "POST", "/v1/sessions/%s%d/segments" % (prefix, i),
                           {"id": "one", "source": s, "hypothesis": h, "translation": r})
            assert st in (200, 201), (st, d)
    elif cmd == "etags":
        prefix, n, out = sys.argv[3], int(sys.argv[4]), sys.argv[5]
        with open(out, "w") as f:
            f.write("return {\n")
            for i in range(n):
                sid = "%s%d" % (prefix, i)
                st, r, d = req(c, "GET", "/v1/sessions/%s/metrics" % sid)
                assert st == 200, (st, d)
                f.write("  [%s] = %s,\n" % (json.dumps(sid), json.dumps(r.getheader("ETag"))))
            f.write("}\n")
    elif cmd == "lat":
        sid, count = sys.argv[3], int(sys.argv[4])
        segs = tico.segments()
        start = int(sys.argv[5]) if len(sys.argv) > 5 else 0
        for i in range(start, start + count):
            s, h, r = segs[i % len(segs)]
            body = json.dumps({"id": "l%d" % i, "source": s, "hypothesis": h, "translation": r})
            t0 = time.perf_counter()
            st, _, d = req(c, "POST", "/v1/sessions/%s/segments" % sid, body)
            dt = time.perf_counter() - t0
            assert st == 201, (st, d)
            print("%.4f" % (dt * 1000))


if __name__ == "__main__":
    main()

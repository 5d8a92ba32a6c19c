#!/usr/bin/env python3
"""Request cost against input size, adversarial inputs (issue 10 §1).

usage: python3 bench/scale.py ADAPTMON OUTDIR

Starts `adaptmon serve` on a free loopback port (tests/api/harness.py) and
drives every route with inputs of doubling size up to the configured limits:
  POST segment, POST check  source n × "a", hypothesis and translation n × "b"
                            (past --max-term-occurrences: answered 422), and
                            204 × "a" / "b" + filler (1,995 occurrences, just
                            under it)
                            (n up to 10,000; the default --max-tokens is 2,500)
                            with the worst
                            glossary: 100,000 entries (--max-glossary-entries),
                            90 of them nested prefixes a … a×10 → b … b×10
                            (about 10 genuine occurrences per position, one
                            nested entry forbidden), the rest "a wK" sharing
                            their first word with them
  PUT glossary              6,250 … 100,000 entries of that shape
  PUT vocabulary            12,500 … 200,000 `count word` lines
  GET metrics / segments / export csv,json,tmx
                            a session of 125 … 2,000 stored 50-token segments
and runs `adaptmon score` with each offline profile: standard and
simianer2019 on one segment of n tokens (n × "a" / n × "b", the nested
glossary), alam2021 on one SGML segment of n tokens from an 8-word
vocabulary (the TERm shift search is the expensive part; see docs/metrics.md).
Reports the median time of 3 runs (1 for the largest CLI runs), the server's
peak RSS (/proc VmHWM, cumulative) or the CLI's peak RSS
(getrusage(RUSAGE_CHILDREN) in a wrapper process), and the least-squares
exponent of time against size on log-log axes. Writes OUTDIR/scale.tsv,
OUTDIR/scale.md (a table for bench/README.md) and bench/scale.svg (gnuplot).
Later series (issue 27; BENCH_SCALE_ONLY in main() runs one alone): /check
on distinct words, whole-session routes, many sessions posting round-robin,
and the route table: every operation of openapi.yaml at the default limits
at three sizes, wall and server CPU, OUTDIR/routes.tsv and routes.md.
Python standard library + gnuplot.
"""
import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))

ADAPTMON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "adaptmon"))
OUT = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "bench"))
os.environ["ADAPTMON"] = ADAPTMON
import harness  # noqa: E402  (needs ADAPTMON set)

NESTED = 10
MAX_TOKENS = 10000
MAX_ENTRIES = 100000


def rep(word, n):
    return " ".join([word] * n)


def glossary(n_entries):
    """The adversarial glossary (JSON entries) of n_entries entries."""
    g = []
    for k in range(1, NESTED + 1):
        g.append({"source": rep("a", k), "targets": [rep("b", k)], "forbidden": k == NESTED})
    for k in range(n_entries - len(g)):
        g.append({"source": "a w%d" % k, "targets": ["b w%d" % k]})
    return g


def vm_hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def timed(fn, reps=3):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2]


def fit(points):
    """Least-squares slope of log(time) on log(size)."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    return sxy / sxx if sxx else float("nan")


ROWS = []  # (route, size, seconds, peak_kb)
GOALS = []  # the issue-27 goal lines of this run, printed again at the end


def goal(line):
    """Prints a goal line now and keeps it for the summary at the end."""
    GOALS.append(line.strip())
    print(line, flush=True)
NOTES = {}  # (route, size) → HTTP status when not 2xx
LAST = [0]


def record(route, size, secs, kb):
    ROWS.append((route, size, secs, kb))
    if LAST[0] >= 300:
        NOTES[(route, size)] = LAST[0]
    print("%-26s %8d %10.4f s %9d kB%s" % (route, size, secs, kb,
                                           "  (HTTP %d)" % LAST[0] if LAST[0] >= 300 else ""),
          flush=True)
    LAST[0] = 0


def expect(r, status, what):
    if r.status not in status:
        raise SystemExit("%s: HTTP %d %s" % (what, r.status, r.body[:300]))
    LAST[0] = r.status


def bench_server():
    # past the default --max-tokens (2500), to show the growth; a segment
    # carries source, hypothesis and translation (--max-segment-tokens)
    srv = harness.Server("--max-tokens", str(MAX_TOKENS),
                         "--max-segment-tokens", str(4 * MAX_TOKENS))
    c = srv.client()
    pid = srv.proc.pid
    try:
        c.create_session(id="adv")
        r = c.put("/v1/sessions/adv/glossary", glossary(MAX_ENTRIES))
        expect(r, (200, 201), "PUT glossary")
        seq = [0]
        for n in (625, 1250, 2500, 5000, 10000):
            src, tgt = rep("a", n), rep("b", n)

            def post():
                seq[0] += 1
                r = c.post("/v1/sessions/adv/segments",
                           {"id": "s%d" % seq[0], "source": src, "hypothesis": tgt,
                            "translation": tgt}, timeout=600)
                # 422 too-many-term-occurrences past --max-term-occurrences
                expect(r, (200, 201, 422), "POST segment n=%d" % n)

            record("POST segment", n, timed(post), vm_hwm_kb(pid))

            def check():
                r = c.post("/v1/sessions/adv/check", {"source": src, "hypothesis": tgt},
                           timeout=600)
                expect(r, (200, 422), "POST check n=%d" % n)

            record("POST check", n, timed(check), vm_hwm_kb(pid))

            # about the most occurrences --max-term-occurrences (2000) lets
            # through: 204 × "a" (1,995 nested occurrences), 204 × "b", then
            # filler (1,800 instances + 20 forbidden uses)
            k = 204
            src2 = " ".join([rep("a", k)] + ["x%d" % i for i in range(n - k)])
            tgt2 = " ".join([rep("b", k)] + ["y%d" % i for i in range(n - k)])

            def post2():
                seq[0] += 1
                r = c.post("/v1/sessions/adv/segments",
                           {"id": "s%d" % seq[0], "source": src2, "hypothesis": tgt2,
                            "translation": tgt2}, timeout=600)
                expect(r, (200, 201), "POST segment at the limit n=%d" % n)

            record("POST segment (1995 occ.)", n, timed(post2), vm_hwm_kb(pid))

            def check2():
                r = c.post("/v1/sessions/adv/check", {"source": src2, "hypothesis": tgt2},
                           timeout=600)
                expect(r, (200,), "POST check at the limit n=%d" % n)

            record("POST check (1995 occ.)", n, timed(check2), vm_hwm_kb(pid))
        for ne in (6250, 12500, 25000, 50000, 100000):
            body = json.dumps(glossary(ne)).encode()

            def put():
                r = c.put("/v1/sessions/adv/glossary", body, ctype="application/json",
                          timeout=600)
                expect(r, (200, 201), "PUT glossary %d" % ne)

            record("PUT glossary", ne, timed(put), vm_hwm_kb(pid))
        for nl in (12500, 25000, 50000, 100000, 200000):
            body = "".join("%d w%d\n" % (1 + k % 1000, k) for k in range(nl))

            def putv():
                r = c.put("/v1/vocabularies/v", body, ctype="text/plain", timeout=600)
                expect(r, (200, 201), "PUT vocabulary %d" % nl)

            record("PUT vocabulary", nl, timed(putv), vm_hwm_kb(pid))
        # stored sessions of doubling size
        rnd = random.Random(1)
        words = ["w%d" % k for k in range(5000)]
        have = 0
        c.create_session(id="big")
        for ns in (125, 250, 500, 1000, 2000):
            while have < ns:
                have += 1
                t = " ".join(rnd.choice(words) for _ in range(50))
                r = c.post("/v1/sessions/big/segments",
                           {"id": "g%d" % have, "source": t, "hypothesis": t, "translation": t})
                expect(r, (200, 201), "POST stored segment")
            # (named apart from bench_whole's series of the same routes,
            # which the report would otherwise fit as one)
            for route, path in (("GET metrics", "/v1/sessions/big/metrics"),
                                ("GET segments", "/v1/sessions/big/segments?limit=1000"),
                                ("GET export csv, 50 words", "/v1/sessions/big/export?format=csv"),
                                ("GET export json, 50 words",
                                 "/v1/sessions/big/export?format=json"),
                                ("GET export tmx, 50 words", "/v1/sessions/big/export?format=tmx")):
                def get():
                    r = c.get(path, timeout=600)
                    expect(r, (200,), path)

                record(route, ns, timed(get), vm_hwm_kb(pid))
    finally:
        c.close()
        srv.stop()


WRAP = ("import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
        "sys.stderr.write(p.stderr.decode('utf-8', 'replace'))\n"
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def cli(args):
    """Runs adaptmon score ARGS in a wrapper; returns (seconds, peak kB, rc, stderr)."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", WRAP, ADAPTMON, "score"] + args,
                       capture_output=True, timeout=900)
    secs = time.perf_counter() - t0
    rc, kb = p.stdout.decode().split()
    return secs, int(kb), int(rc), p.stderr.decode("utf-8", "replace")


def sgml(tag, sysid, tokens, term):
    body = "<term id=\"1\" type=\"t\" src=\"w1\" tgt=\"le\"> %s </term> " % term if term else ""
    return ("<%s setid=\"x\" srclang=\"en\" trglang=\"fr\">\n"
            "<doc sysid=\"%s\" docid=\"d1\" genre=\"t\" origlang=\"en\">\n<p>\n"
            "<seg id=\"1\"> %s%s </seg>\n</p>\n</doc>\n</%s>\n"
            % (tag, sysid, body, " ".join(tokens), tag))


def bench_cli():
    d = os.path.join(OUT, "scale-cli")
    os.makedirs(d, exist_ok=True)
    gl = os.path.join(d, "glossary.json")
    with open(gl, "w") as f:
        json.dump(glossary(MAX_ENTRIES), f)
    for profile in ("standard", "simianer2019"):
        for n in (625, 1250, 2500, 5000, 10000):
            paths = {}
            for name, word in (("src", "a"), ("ref", "b"), ("hyp", "b")):
                paths[name] = os.path.join(d, "%s-%d.txt" % (name, n))
                with open(paths[name], "w") as f:
                    f.write(rep(word, n) + "\n")
            args = ["--profile", profile, "--src", paths["src"], "--ref", paths["ref"],
                    "--hyp", paths["hyp"], "--glossary", gl, "--json"]
            runs = [cli(args) for _ in range(3)]
            for r in runs:
                if r[2] != 0:
                    raise SystemExit("score %s n=%d: %s" % (profile, n, r[3]))
            runs.sort()
            record("score " + profile, n, runs[1][0], max(r[1] for r in runs))
    rnd = random.Random(7)
    vocab = ["le", "la", "de", "et", "un", "une", "des", "pour"]
    for n in (20, 40, 80, 160):
        ref = [rnd.choice(vocab) for _ in range(n)]
        hyp = ref[:]
        for _ in range(n // 10):
            i, j = rnd.randrange(n), rnd.randrange(n)
            hyp[i], hyp[j] = hyp[j], hyp[i]
        paths = []
        for name, text in (("src", sgml("srcset", "src", ["w%d" % (i % 50) for i in range(n)],
                                        "w1")),
                           ("ref", sgml("refset", "ref", ref, "le")),
                           ("hyp", sgml("tstset", "S", hyp, None))):
            p = os.path.join(d, "%s-%d.sgm" % (name, n))
            with open(p, "w") as f:
                f.write(text)
            paths.append(p)
        args = ["--profile", "alam2021", "--sgm-src", paths[0], "--sgm-ref", paths[1],
                "--sgm-hyp", "S=" + paths[2], "--json"]
        r = cli(args)
        if r[2] != 0:
            raise SystemExit("score alam2021 n=%d: %s" % (n, r[3]))
        record("score alam2021", n, r[0], r[1])


def report(plot=True):
    if not ROWS:
        return  # a BENCH_SCALE_ONLY part without these series: keep OUTDIR's
    routes = []
    for r in ROWS:
        if r[0] not in routes:
            routes.append(r[0])
    with open(os.path.join(OUT, "scale.tsv"), "w") as f:
        f.write("route\tsize\tseconds\tpeak_kb\n")
        for r in ROWS:
            f.write("%s\t%d\t%.6f\t%d\n" % r)
    lines = ["| route | sizes | seconds per size | peak RSS MB (last) | exponent |",
             "|---|---|---|---|---|"]
    exps = {}
    for route in routes:
        pts = [(n, t) for rr, n, t, _ in ROWS if rr == route]
        kb = [k for rr, _, _, k in ROWS if rr == route]
        # the exponent over the upper half of the sizes (fixed costs dominate below)
        e = fit(pts[len(pts) // 2 - (1 if len(pts) % 2 == 0 else 0):])
        exps[route] = e
        lines.append("| %s | %s | %s | %.0f | %.2f |" % (
            route, ", ".join(str(n) for n, _ in pts),
            ", ".join("%.4f%s" % (t, " (%d)" % NOTES[(route, n)] if (route, n) in NOTES else "")
                      for n, t in pts), kb[-1] / 1024.0, e))
    with open(os.path.join(OUT, "scale.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not plot:
        return
    # plot: one data block per route
    dat = os.path.join(OUT, "scale.dat")
    with open(dat, "w") as f:
        for route in routes:
            f.write("# %s\n" % route)
            for rr, n, t, _ in ROWS:
                if rr == route:
                    f.write("%d %.6f\n" % (n, t))
            f.write("\n\n")
    plot = ["set terminal svg size 960,600 dynamic font 'sans,11'",
            "set output '%s'" % os.path.join(HERE, "scale.svg"),
            "set logscale xy", "set grid",
            "set xlabel 'input size (tokens, entries, lines or stored segments)'",
            "set ylabel 'seconds per request / run'",
            "set key outside right",
            "set title 'adaptmon: cost against input size, adversarial inputs'"]
    parts = []
    for i, route in enumerate(routes):
        parts.append("'%s' index %d using 1:2 with linespoints title '%s (n^%.2f)'"
                     % (dat, i, route, exps[route]))
    plot.append("plot " + ", \\\n     ".join(parts))
    gp = os.path.join(OUT, "scale.gp")
    with open(gp, "w") as f:
        f.write("\n".join(plot) + "\n")
    subprocess.run(["gnuplot", gp], check=True)


def pool_word(i):
    """The i-th of distinct lowercase content words."""
    s, letters = "q", "bcdfghjklmnprstvz"
    while True:
        s += letters[i % len(letters)]
        i //= len(letters)
        if not i:
            return s + "o"


CHECK_ROUTE = "POST check, distinct words"
CHECK_SIZES = (1250, 2500, 5000, 10000)


def bench_check():
    """POST /check with hypotheses of n distinct words (one history lookup
    each), in a session of 32 settled and 8 pending segments of 2,000
    words (the pending segments are the ones every lookup used to scan)."""
    srv = harness.Server("--max-tokens", str(MAX_TOKENS),
                         "--max-segment-tokens", str(4 * MAX_TOKENS))
    c = srv.client()
    pid = srv.proc.pid
    try:
        rng = random.Random(27)
        pool = [pool_word(i) for i in range(4 * MAX_TOKENS)]
        c.create_session(id="chk")
        for i in range(40):
            text = " ".join(rng.sample(pool, 2000))
            r = c.post("/v1/sessions/chk/segments",
                       {"id": "c%d" % i, "source": "s", "hypothesis": text, "translation": text},
                       timeout=600)
            expect(r, (201,), "POST segment c%d" % i)
        for n in CHECK_SIZES:
            hyp = " ".join(rng.sample(pool, n))

            def check():
                r = c.post("/v1/sessions/chk/check", {"source": "s", "hypothesis": hyp},
                           timeout=600)
                expect(r, (200,), "POST check n=%d" % n)

            record(CHECK_ROUTE, n, timed(check), vm_hwm_kb(pid))
    finally:
        c.close()
        srv.stop()
    pts = [(n, t) for rr, n, t, _ in ROWS if rr == CHECK_ROUTE]
    at = dict(pts)
    goal("goal 3: /check: %.1f ms at 2,500 tokens (goal <= 20 ms); exponent %.2f over %d..%d tokens"
         % (at[2500] * 1000, fit(pts), CHECK_SIZES[0], CHECK_SIZES[-1]))


# ---- whole-session routes (issue 27 goal 4) ---------------------------------

WHOLE_SIZES = [int(x) for x in os.environ.get("WHOLE_SIZES", "1000,4000,16000,64000").split(",")]


def cpu_s(pid):
    """utime + stime of process pid in seconds (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_whole():
    """GET metrics?ci=0.95, curve?window=50, export json/csv/tmx and POST
    rescore on sessions of WHOLE_SIZES segments (two systems, TICO-19
    texts: 40 posted, then copied in SQL by tests/reliability/rel.py's
    grow_session), no CPU budget (--request-timeout-ms 0). Each first GET
    of a version is timed (the answer cache keeps the next ones); prints
    the goal-4 ratios: ci and curve at the largest size, CSV/TMX against
    JSON per segment, rescore per segment against a POST's per segment
    (a POST is scoring + storage: the ratio to scoring alone is larger)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "reliability"))
    from rel import grow_session, seg_body, tico19  # noqa: E402
    import whole_ab  # noqa: E402 (bench/: the CPU sampling)
    res = {}
    for n in WHOLE_SIZES:
        srv = harness.Server("--request-timeout-ms", "0")
        c = srv.client()
        opts = {"baseline_system": "base"}  # the standard profile
        c.create_session(id="w", options=opts)
        segs = tico19()
        c0 = cpu_s(srv.proc.pid)
        t0 = time.perf_counter()
        for k in range(40):
            body = dict(seg_body(segs[k], "s%d" % k))
            body.pop("hypothesis", None)
            body["hypotheses"] = {"base": segs[k]["hypothesis"], "good": segs[k]["translation"]}
            expect(c.post("/v1/sessions/w/segments", body), (201,), "POST %d" % k)
        post_wall, post_cpu = (time.perf_counter() - t0) / 40, (cpu_s(srv.proc.pid) - c0) / 40
        c.close()
        db = srv.db
        srv.stop()
        grow_session(db, "w", n)
        srv = harness.Server("--request-timeout-ms", "0", db=db)
        c = srv.client()
        pid = srv.proc.pid

        def one(route, method, path, status=(200,)):
            c0 = whole_ab.cpu_sample(pid)  # threads' run time: ns, not 10 ms ticks
            t0 = time.perf_counter()
            r = c.request(method, path, timeout=3600)
            secs = time.perf_counter() - t0
            LAST[0] = r.status
            expect(r, status, "%s n=%d" % (route, n))
            res[(route, n)] = (secs, whole_ab.cpu_delta(c0, whole_ab.cpu_sample(pid)))
            record(route, n, secs, vm_hwm_kb(pid))

        one("GET metrics?ci=0.95", "GET", "/v1/sessions/w/metrics?ci=0.95")
        one("GET curve?window=50", "GET", "/v1/sessions/w/curve?window=50")
        for fmt in ("json", "csv", "tmx"):
            one("GET export " + fmt, "GET", "/v1/sessions/w/export?format=" + fmt)
        one("POST rescore", "POST", "/v1/sessions/w/rescore")
        res[("POST segment", n)] = (post_wall, post_cpu)
        c.close()
        srv.stop()
    big = WHOLE_SIZES[-1]
    print("\n== goal 4 at %d segments (wall s, server CPU s)" % big)
    for route in ("GET metrics?ci=0.95", "GET curve?window=50", "GET export json",
                  "GET export csv", "GET export tmx", "POST rescore"):
        w, cp = res[(route, big)]
        print("%-22s %8.3f s wall %8.3f s CPU  exponent %.2f" %
              (route, w, cp, fit([(n, res[(route, n)][0]) for n in WHOLE_SIZES])))
    js = res[("GET export json", big)][1] or 1e-9
    for fmt in ("csv", "tmx"):
        goal("goal 4: export %s / json CPU per segment at %d: %.2f x (goal <= 2)" %
             (fmt, big, res[("GET export " + fmt, big)][1] / js))
    pw, pc = res[("POST segment", big)]
    rw, rc = res[("POST rescore", big)]
    goal("goal 4: rescore CPU per segment %.1f us; a POST's %.1f us: %.2f x (the goal, <= 2 x "
         "the scoring alone, is measured by profile: bench/README.md, goal 4 third pass)" %
         (rc / big * 1e6, pc * 1e6, rc / big / pc if pc else float("nan")))
    goal("goal 4: metrics?ci=0.95 at %d: %.2f s wall, %.2f s CPU (goal <= 1 s); curve?window=50: "
         "%.0f ms wall, %.0f ms CPU (goal <= 100 ms)" %
         (big, res[("GET metrics?ci=0.95", big)][0], res[("GET metrics?ci=0.95", big)][1],
          res[("GET curve?window=50", big)][0] * 1000, res[("GET curve?window=50", big)][1] * 1000))


# ---- many sessions posting round-robin (issue 27 goal 2) ---------------------

SESS_SIZES = [int(x) for x in os.environ.get("SESS_SIZES", "100,3000,10000").split(",")]
SESS_GLOSSARY = int(os.environ.get("SESS_GLOSSARY", "200"))
SESS_ROUNDS = int(os.environ.get("SESS_ROUNDS", "2"))
# SESS_KIND: same (every session the same SESS_GLOSSARY-entry glossary),
# distinct (each session a glossary of its own, 20 … 200 entries), shared
# (SESS_SHARED distinct glossaries, default 50, session i on glossary
# i mod SESS_SHARED: a client's termbase used by many translators, the
# usual shape of a CAT platform), none; comma-separated to run several
SESS_KINDS = os.environ.get("SESS_KIND", "same").split(",")
SESS_SHARED = int(os.environ.get("SESS_SHARED", "50"))
# SESS_MIN_POSTS: a size's timed rounds are at least this many POSTs
# (default 0: SESS_ROUNDS for every size). More rounds make the small
# sizes' sessions longer than the large sizes' (31 segments against 2 at
# 3,000), which is not the same work a POST; CPU is read from the threads'
# run time in ns, so 100 POSTs are measured to the µs (repeat the run and
# take the median against the machine's load instead)
SESS_MIN_POSTS = int(os.environ.get("SESS_MIN_POSTS", "0"))
# SESS_BINS: binaries to compare, interleaved on the same database (default
# the ADAPTMON argument); SESS_MEMORY: --session-memory (default the server's)
SESS_BINS = [os.path.abspath(b) for b in os.environ.get("SESS_BINS", ADAPTMON).split(",")]
SESS_MEMORY = os.environ.get("SESS_MEMORY", "")


def vm_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def sess_glossary(kind, i):
    """The glossary (JSON entries) of session i of a SESS_KIND, or None."""
    if kind == "none":
        return None
    if kind == "same":
        return [{"source": "term%d" % k, "targets": ["terme%d" % k]} for k in range(SESS_GLOSSARY)]
    if kind == "shared":
        return sess_glossary("distinct", i % SESS_SHARED)
    # distinct: 20 … 200 entries, a few of them words of the TICO-19 text
    # (so that terms match), the rest of the session's own
    n = 20 + (i * 37) % 181
    common = ["virus", "health", "patients", "disease", "cases", "infection", "symptoms"]
    g = [{"source": w, "targets": [w + "-fr%d" % (i % 5)]} for w in common[:1 + i % len(common)]]
    g += [{"source": "s%dt%d word" % (i, k), "targets": ["c%dt%d mot" % (i, k)]}
          for k in range(n - len(g))]
    return g


def sess_server(binary, db):
    harness.ADAPTMON = binary
    args = ["--request-timeout-ms", "0"]
    if SESS_MEMORY:
        args += ["--session-memory", SESS_MEMORY]
    return harness.Server(*args, db=db)


def sess_db(kind, n):
    """A database of n sessions of kind (created once, copied for each binary)."""
    import shutil
    srv = sess_server(SESS_BINS[0], None)
    c = srv.client()
    for i in range(n):
        c.create_session(id="m%d" % i)
        gl = sess_glossary(kind, i)
        if gl is not None:
            expect(c.put("/v1/sessions/m%d/glossary" % i, gl), (200,), "PUT glossary m%d" % i)
    c.close()
    srv.stop()
    keep = os.path.join(OUT, "sessions-%s-%d.db" % (kind, n))
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(keep + ext):
            os.remove(keep + ext)
        if os.path.exists(srv.db + ext):
            shutil.copy(srv.db + ext, keep + ext)
    return keep


def sess_run(binary, db, n, segs):
    """One server of binary on a copy of db: the rounds; (CPU per POST,
    wall, warm-up CPU, RSS kB, cache metrics)."""
    import shutil
    from rel import seg_body  # noqa: E402
    work = db + ".run"
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(work + ext):
            os.remove(work + ext)
        if os.path.exists(db + ext):
            shutil.copy(db + ext, work + ext)
    srv = sess_server(binary, work)
    c = srv.client()
    pid = srv.proc.pid
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import whole_ab  # noqa: E402 (the CPU sampling: threads' run time in ns)
    timed = max(SESS_ROUNDS, -(-SESS_MIN_POSTS // n))
    seq = 0
    rounds = []
    for rnd in range(1 + timed):
        c0 = whole_ab.cpu_sample(pid)
        t0 = time.perf_counter()
        for i in range(n):
            body = seg_body(segs[seq % len(segs)], "r%d" % rnd)
            seq += 1
            expect(c.post("/v1/sessions/m%d/segments" % i, body), (201,), "POST m%d" % i)
        rounds.append((whole_ab.cpu_delta(c0, whole_ab.cpu_sample(pid)) / n,
                       (time.perf_counter() - t0) / n))
    timed_cpu = sum(r[0] for r in rounds[1:]) / timed
    timed_wall = sum(r[1] for r in rounds[1:]) / timed
    m = c.get("/metrics").body.decode("utf-8", "replace")
    ev = [ln for ln in m.splitlines() if ln.startswith("adaptmon_session") and
          ("evict" in ln or "cached" in ln or "memory_bytes" in ln or "form_builds" in ln)]
    rss = vm_rss_kb(pid)
    c.close()
    srv.stop()
    return timed_cpu, timed_wall, rounds[0][0], rss, ev


def bench_sessions():
    """N sessions (SESS_SIZES) of each SESS_KIND (en->fr, the standard
    profile), posted round-robin: one warm-up round (each runtime built
    once), then SESS_ROUNDS timed rounds of one TICO-19 segment per
    session, by each of SESS_BINS in turn on copies of one database.
    Prints the server's CPU per POST of the timed rounds, its RSS after
    them, the cache's evictions, and the ratio of each size's CPU per POST
    to the smallest size's (goal: the largest within 1.3x)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "reliability"))
    from rel import tico19  # noqa: E402
    segs = tico19()
    res = {}
    for kind in SESS_KINDS:
        for n in SESS_SIZES:
            db = sess_db(kind, n)
            for b in SESS_BINS:
                cpu, wall, warm, rss, ev = sess_run(b, db, n, segs)
                res[(kind, n, b)] = cpu
                print("%-8s %s sessions %6d: CPU per POST %7.1f us (warm-up round %7.1f us), "
                      "wall %7.1f us, RSS %7d kB; %s" %
                      (kind, os.path.basename(os.path.dirname(b)) or b, n, cpu * 1e6, warm * 1e6,
                       wall * 1e6, rss, "; ".join(ev)), flush=True)
                record("POST round-robin %s" % kind, n, cpu, rss)
            for ext in ("", "-wal", "-shm", ".run", ".run-wal", ".run-shm"):
                if os.path.exists(db + ext):
                    os.remove(db + ext)
    small, big = SESS_SIZES[0], SESS_SIZES[-1]
    for kind in SESS_KINDS:
        for b in SESS_BINS:
            r = res[(kind, small, b)]
            goal("\n== goal 2 (%s, %s): CPU per POST at %d sessions / at %d: %.2f x (goal <= 1.3)" %
                 (kind, b, big, small, res[(kind, big, b)] / r if r else float("nan")))


# ---- every route of openapi.yaml at the default limits (issue 27 goal 3) -----

# sizes of each axis: stored segments of the session the session routes
# read, tokens of a segment or check, glossary entries, vocabulary lines,
# sessions on the server, items of a batch POST, units of an XLIFF import
ROUTE_SEGS = [int(x) for x in os.environ.get("ROUTE_SEGS", "1000,4000,16000").split(",")]
ROUTE_TOKENS = (625, 1250, 2500)  # up to the default --max-tokens
ROUTE_ENTRIES = (25000, 50000, 100000)  # up to the default --max-glossary-entries
ROUTE_LINES = (50000, 100000, 200000)  # vocabulary lines (bounded by --max-glossary-body only)
ROUTE_SESSIONS = (100, 400, 1600)
ROUTE_ITEMS = (250, 500, 1000)  # batch items / import units (1,000 TICO-19 items: ~0.5 MB)
# routes that return or recompute a whole session (or the edited segment and
# every later one): exempt from "<= 100 ms at the default limits"
WHOLE = {"GET metrics?ci=0.95", "GET curve?window=50", "GET export json", "GET export csv",
         "GET export tmx", "POST rescore", "GET events?after=0", "PUT segment (middle)",
         "DELETE segment (middle)", "DELETE session"}
# bulk writes: many segments (or entries) in one request, bounded by a body
# limit rather than by a per-request one; reported per item beside the total
BULK = {"POST segments (batch)", "POST import (XLIFF)", "PUT glossary", "PUT vocabulary"}
RROWS = []  # (route, axis, size, wall s, server CPU s, HTTP status)


def rmeasure(route, axis, size, pid, fn, reps=5, prep=None):
    """Times fn (one request; returns its status) reps times, prep (not
    timed) before each; records the medians of wall time and of the server's
    CPU (threads' run time, bench/whole_ab.py)."""
    import whole_ab  # noqa: E402 (bench/)
    walls, cpus, ticks, status = [], [], 0.0, 0
    for _ in range(reps):
        if prep:
            prep()
        c0 = whole_ab.cpu_sample(pid)
        t0 = time.perf_counter()
        status = fn()
        walls.append(time.perf_counter() - t0)
        c1 = whole_ab.cpu_sample(pid)
        cpus.append(whole_ab.cpu_delta(c0, c1))
        ticks += c1[1] - c0[1]
    walls.sort()
    cpus.sort()
    # an offloaded handler (routes.c) runs on a thread that has exited when
    # it is sampled: only the process's 10 ms ticks keep its time, so the
    # mean of the ticks over the reps when they say more than the threads
    w, cp = walls[len(walls) // 2], max(cpus[len(cpus) // 2], ticks / reps)
    RROWS.append((route, axis, size, w, cp, status))
    print("%-28s %-9s %7d %9.4f s wall %9.4f s CPU  HTTP %d" % (route, axis, size, w, cp, status),
          flush=True)


def rclient(srv):
    """A client of srv whose connection waits up to an hour for an answer
    (harness.Client sets the timeout when it connects)."""
    c = srv.client()
    c.request("GET", "/healthz", timeout=3600)
    return c


def rreq(c, method, path, body=None, ok=(200,), **kw):
    """One request of the table; its status (a status outside ok stops the run)."""
    r = c.request(method, path, body, timeout=3600, **kw)
    if r.status not in ok:
        raise SystemExit("%s %s: HTTP %d %s" % (method, path, r.status, r.body[:300]))
    return r.status


def sse_until(port, path, count):
    """Opens the event stream path and reads until count `event: segment`
    events arrived (then closes); returns 200."""
    import socket
    s = socket.create_connection(("127.0.0.1", port), timeout=600)
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
               % path).encode())
    mark = b"event: segment\n"
    tail, seen = b"", 0
    while seen < count:
        chunk = s.recv(1 << 16)
        if not chunk:
            raise SystemExit("%s: stream closed after %d events" % (path, seen))
        data = tail + chunk
        seen += data.count(mark)
        tail = data[-(len(mark) - 1):]  # shorter than a mark: nothing counted twice
    s.close()
    return 200


def xliff(n, first):
    """An XLIFF 1.2 file of n confirmed TICO-19 units (ids from first on),
    each with a machine-translation alt-trans."""
    from rel import tico19  # noqa: E402
    from xml.sax.saxutils import escape
    segs = tico19()
    units = []
    for k in range(n):
        s = segs[k % len(segs)]
        units.append('<trans-unit id="u%d"><source>%s</source><target state="translated">%s'
                      '</target><alt-trans tool-id="fairseq"><target>%s</target></alt-trans>'
                      '</trans-unit>' % (first + k, escape(s["source"]), escape(s["translation"]),
                                         escape(s["hypothesis"])))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" '
            'xmlns="urn:oasis:names:tc:xliff:document:1.2">\n<file original="t.txt" '
            'source-language="en" target-language="fr" datatype="plaintext"><body>\n%s\n'
            '</body></file></xliff>\n' % "\n".join(units))


def routes_session():
    """The routes of one session of ROUTE_SEGS stored segments (posted by
    batch POSTs: checkpoints, history and totals as a real session has
    them), standard profile, the TICO-19 glossary, default server limits."""
    from rel import tico19  # noqa: E402
    segs = tico19()
    with open(os.path.join(ROOT, "data", "glossaries", "tico19", "f_en-fr_XX.csv"), "rb") as f:
        tico_gl = f.read()
    srv = harness.Server()
    c = rclient(srv)
    pid = srv.proc.pid
    n = [0]  # segments posted so far (client ids t1 … tN)

    def body(k):
        s = segs[(k - 1) % len(segs)]
        return {"id": "t%d" % k, "source": s["source"], "hypothesis": s["hypothesis"],
                "translation": s["translation"]}

    def bump():
        # a new segment: a new version, so that cached answers are computed again
        n[0] += 1
        rreq(c, "POST", "/v1/sessions/r/segments", body(n[0]), ok=(201,))

    try:
        c.create_session(id="r")
        rreq(c, "PUT", "/v1/sessions/r/glossary", tico_gl, ok=(200,), ctype="text/csv")
        for size in ROUTE_SEGS:
            while n[0] < size:
                k = min(1000, size - n[0])
                rreq(c, "POST", "/v1/sessions/r/segments",
                     [body(n[0] + i + 1) for i in range(k)], ok=(200, 201))
                n[0] += k
            a = "segments"
            for route, path in (("GET session", "/v1/sessions/r"),
                                ("GET segments (page)", "/v1/sessions/r/segments"),
                                ("GET segments limit=1000", "/v1/sessions/r/segments?after=%d"
                                 "&limit=1000" % (size // 2)),
                                ("GET segment", "/v1/sessions/r/segments/t%d" % (size // 2)),
                                ("GET vocabulary word", "/v1/sessions/r/vocabulary/douleur"),
                                ("GET metrics", "/v1/sessions/r/metrics"),
                                ("GET curve", "/v1/sessions/r/curve"),
                                ("GET curve?ci=1", "/v1/sessions/r/curve?ci=1"),
                                ("GET plot.svg", "/v1/sessions/r/plot.svg"),
                                ("GET glossary", "/v1/sessions/r/glossary"),
                                ("GET /metrics", "/metrics"),
                                ("GET /healthz", "/healthz"),
                                ("GET /readyz", "/readyz")):
                rmeasure(route, a, size, pid, lambda p=path: rreq(c, "GET", p), prep=bump)
            rmeasure("POST segment", a, size, pid, lambda: (n.__setitem__(0, n[0] + 1),
                     rreq(c, "POST", "/v1/sessions/r/segments", body(n[0]), ok=(201,)))[1])
            chk = segs[size % len(segs)]
            rmeasure("POST check", a, size, pid, lambda: rreq(
                c, "POST", "/v1/sessions/r/check",
                {"source": chk["source"], "hypothesis": chk["hypothesis"]}))
            rmeasure("GET events (one)", a, size, pid,
                     lambda: sse_until(srv.port, "/v1/sessions/r/events?after=%d" % (n[0] - 1), 1))
            # the last segment: a replay from its checkpoint (fewer than 32)
            rmeasure("PUT segment (last)", a, size, pid, lambda: rreq(
                c, "PUT", "/v1/sessions/r/segments/t%d" % n[0],
                dict(body(n[0] + 7), id="t%d" % n[0])))
            rmeasure("DELETE segment (last)", a, size, pid, lambda: rreq(
                c, "DELETE", "/v1/sessions/r/segments/t%d" % n[0], ok=(200, 204)),
                prep=bump)
            # whole-session routes, each once on a fresh version
            for route, path in (("GET metrics?ci=0.95", "/v1/sessions/r/metrics?ci=0.95"),
                                ("GET curve?window=50", "/v1/sessions/r/curve?window=50"),
                                ("GET export json", "/v1/sessions/r/export?format=json"),
                                ("GET export csv", "/v1/sessions/r/export?format=csv"),
                                ("GET export tmx", "/v1/sessions/r/export?format=tmx")):
                rmeasure(route, a, size, pid, lambda p=path: rreq(c, "GET", p), reps=1, prep=bump)
            rmeasure("GET events?after=0", a, size, pid,
                     lambda: sse_until(srv.port, "/v1/sessions/r/events?after=0", size), reps=1)
            # the middle segment: every later one re-scored (503 past the
            # request's CPU budget, --request-timeout-ms 5000)
            mid = "t%d" % (size // 2)
            rmeasure("PUT segment (middle)", a, size, pid, lambda: rreq(
                c, "PUT", "/v1/sessions/r/segments/" + mid, dict(body(size // 2 + 3), id=mid),
                ok=(200, 503)), reps=1)
            rmeasure("DELETE segment (middle)", a, size, pid, lambda: rreq(
                c, "DELETE", "/v1/sessions/r/segments/t%d" % (size // 2 + 1), ok=(200, 204, 503)),
                reps=1)
            rmeasure("POST rescore", a, size, pid,
                     lambda: rreq(c, "POST", "/v1/sessions/r/rescore", ok=(200,)), reps=1)
        rmeasure("DELETE session", "segments", ROUTE_SEGS[-1], pid,
                 lambda: rreq(c, "DELETE", "/v1/sessions/r", ok=(200, 204)), reps=1)
    finally:
        c.close()
        srv.stop()


def routes_sizes():
    """The routes whose cost is the size of their input: segments and checks
    of n tokens (plain, and with 1,995 term occurrences of the adversarial
    glossary: the most --max-term-occurrences lets through), glossaries,
    vocabularies, batch POSTs and XLIFF imports; and the service routes
    against the number of sessions. Default server limits throughout."""
    from rel import tico19  # noqa: E402
    segs = tico19()
    srv = harness.Server()
    c = rclient(srv)
    pid = srv.proc.pid
    seq = [0]
    try:
        c.create_session(id="plain")
        c.create_session(id="adv")
        rreq(c, "PUT", "/v1/sessions/adv/glossary", glossary(MAX_ENTRIES), ok=(200,))
        a = "tokens"
        for n in ROUTE_TOKENS:
            words = ["v%d" % i for i in range(n)]
            plain = " ".join(words)
            k = 204
            src2 = " ".join([rep("a", k)] + ["x%d" % i for i in range(n - k)])
            tgt2 = " ".join([rep("b", k)] + ["y%d" % i for i in range(n - k)])
            for route, sess, src, hyp in (("POST segment, n words", "plain", plain, plain),
                                          ("POST segment, 1995 occ.", "adv", src2, tgt2)):
                def post(sess=sess, src=src, hyp=hyp):
                    seq[0] += 1
                    return rreq(c, "POST", "/v1/sessions/%s/segments" % sess,
                                {"id": "s%d" % seq[0], "source": src, "hypothesis": hyp,
                                 "translation": hyp}, ok=(201,))
                rmeasure(route, a, n, pid, post)
            for route, sess, src, hyp in (("POST check, n words", "plain", plain, plain),
                                          ("POST check, 1995 occ.", "adv", src2, tgt2)):
                rmeasure(route, a, n, pid, lambda sess=sess, src=src, hyp=hyp: rreq(
                    c, "POST", "/v1/sessions/%s/check" % sess, {"source": src, "hypothesis": hyp}))
        a = "entries"
        c.create_session(id="g")
        for ne in ROUTE_ENTRIES:
            b = json.dumps(glossary(ne)).encode()
            rmeasure("PUT glossary", a, ne, pid, lambda b=b: rreq(
                c, "PUT", "/v1/sessions/g/glossary", b, ok=(200,), ctype="application/json"),
                reps=3)
            rmeasure("GET glossary", a, ne, pid, lambda: rreq(c, "GET", "/v1/sessions/g/glossary"),
                     reps=3)
            # the session resource and a page of sessions carry the entry
            # count; every session route reads the session row (its glossary
            # text with it: AM_SESSION_COLS)
            for route, path in (("GET session", "/v1/sessions/g"),
                                ("GET sessions (page)", "/v1/sessions?after=f&limit=1"),
                                ("GET metrics", "/v1/sessions/g/metrics")):
                rmeasure(route, a, ne, pid, lambda p=path: rreq(c, "GET", p))
            rmeasure("DELETE glossary", a, ne, pid, lambda: rreq(
                c, "DELETE", "/v1/sessions/g/glossary", ok=(200, 204)), reps=1)
        a = "lines"
        for nl in ROUTE_LINES:
            b = "".join("%d w%d\n" % (1 + k % 1000, k) for k in range(nl))
            rmeasure("PUT vocabulary", a, nl, pid, lambda b=b: rreq(
                c, "PUT", "/v1/vocabularies/v", b, ok=(200, 201), ctype="text/plain"), reps=3)
            rmeasure("GET vocabulary", a, nl, pid, lambda: rreq(c, "GET", "/v1/vocabularies/v"),
                     reps=3)
            rmeasure("DELETE vocabulary", a, nl, pid, lambda: rreq(
                c, "DELETE", "/v1/vocabularies/v", ok=(200, 204)), reps=1)
        a = "items"
        for ni in ROUTE_ITEMS:
            def batch(ni=ni):
                seq[0] += 1
                sid = "b%d" % seq[0]
                c.create_session(id=sid)
                return rreq(c, "POST", "/v1/sessions/%s/segments" % sid,
                            [dict(id="i%d" % k, source=segs[k % len(segs)]["source"],
                                  hypothesis=segs[k % len(segs)]["hypothesis"],
                                  translation=segs[k % len(segs)]["translation"])
                             for k in range(ni)], ok=(200, 201))
            rmeasure("POST segments (batch)", a, ni, pid, batch, reps=3)
            x = xliff(ni, 0)

            def imp(x=x):
                seq[0] += 1
                sid = "x%d" % seq[0]
                c.create_session(id=sid)
                return rreq(c, "POST", "/v1/sessions/%s/import" % sid, x, ok=(200, 201),
                            ctype="application/xliff+xml")
            rmeasure("POST import (XLIFF)", a, ni, pid, imp, reps=3)
        a = "sessions"
        have = len(c.jget("/v1/sessions?limit=1000")["sessions"])
        for ns in ROUTE_SESSIONS:
            while have < ns:
                have += 1
                c.create_session(id="n%d" % have)
            rmeasure("POST session", a, ns, pid, lambda: (seq.__setitem__(0, seq[0] + 1),
                     rreq(c, "POST", "/v1/sessions", {"id": "p%d" % seq[0], "source_lang": "en",
                                                      "target_lang": "fr"}, ok=(201,)))[1])
            have += 5
            for route, path in (("GET sessions (page)", "/v1/sessions"),
                                ("GET sessions limit=1000", "/v1/sessions?limit=1000"),
                                ("GET /metrics", "/metrics"),
                                ("GET /healthz", "/healthz"),
                                ("GET /readyz", "/readyz"),
                                ("GET /openapi.yaml", "/openapi.yaml"),
                                ("GET /dashboard/index.html", "/dashboard/index.html")):
                rmeasure(route, a, ns, pid, lambda p=path: rreq(c, "GET", p))
    finally:
        c.close()
        srv.stop()


def routes_report():
    """OUTDIR/routes.tsv (one row per route and size) and OUTDIR/routes.md
    (one row per route and axis: sizes, wall and CPU per size, the exponent
    of the server's CPU against size, whole-session or not, goal 3)."""
    with open(os.path.join(OUT, "routes.tsv"), "w") as f:
        f.write("route\taxis\tsize\twall_s\tcpu_s\tstatus\twhole_session\n")
        for r in RROWS:
            f.write("%s\t%s\t%d\t%.6f\t%.6f\t%d\t%d\n" % (r + (int(r[0] in WHOLE),)))
    keys = []
    for r in RROWS:
        if (r[0], r[1]) not in keys:
            keys.append((r[0], r[1]))
    lines = ["| route | size axis | sizes | wall s per size | server CPU s per size | "
             "exponent (CPU) | kind | goal 3 |", "|---|---|---|---|---|---|---|---|"]
    unmet = []
    for route, axis in keys:
        rows = [r for r in RROWS if r[0] == route and r[1] == axis]
        e = fit([(r[2], r[4]) for r in rows]) if len(rows) > 1 else float("nan")
        last = rows[-1]
        kind = ("whole session" if route in WHOLE else "bulk" if route in BULK else "per request")
        fmt = lambda t, st: "%.4f%s" % (t, "" if st < 300 else " (%d)" % st)  # noqa: E731
        if route in WHOLE:
            steep = e > 1.3 and last[4] >= 0.005  # (below 5 ms: noise, as below)
            verdict = "exempt (exponent %s)" % ("> 1.3: not met" if steep else "<= 1.3")
            if steep:
                unmet.append(route + " (exponent)")
        else:
            # below 5 ms of CPU at every size the fixed cost of a request
            # is all there is to measure: the exponent is noise
            ok_lin = not e > 1.3 or len(rows) < 2 or last[4] < 0.005
            # the server's CPU, not the wall time: on the shared 2 cores the
            # wall time of an offloaded handler (nice 10, http.c) is mostly
            # waiting for a core (both are in the table)
            ok_100 = last[4] <= 0.1
            verdict = "met" if ok_lin and ok_100 else "not met (%s)" % ", ".join(
                w for w, bad in (("exponent > 1.3", not ok_lin),
                                 ("%.0f ms CPU at %d %s" % (last[4] * 1e3, last[2], axis),
                                  not ok_100))
                if bad)
            if route in BULK:
                verdict += "; %.0f us CPU per %s" % (last[4] / last[2] * 1e6,
                                                    {"entries": "entry"}.get(axis, axis[:-1]))
            if not verdict.startswith("met"):
                unmet.append(route)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            route, axis, ", ".join(str(r[2]) for r in rows),
            ", ".join(fmt(r[3], r[5]) for r in rows), ", ".join("%.4f" % r[4] for r in rows),
            "%.2f" % e if e == e else "-", kind, verdict))
    with open(os.path.join(OUT, "routes.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    chk = [r for r in RROWS if r[0] == "POST check, n words" and r[2] == 2500]
    if chk:
        goal("\n== goal 3: /check at 2,500 tokens (route table) %.1f ms wall, %.1f ms server CPU "
             "(goal <= 20 ms)" % (chk[0][3] * 1e3, chk[0][4] * 1e3))
    goal("== goal 3: per-request routes over 100 ms of CPU or exponent > 1.3 at the default "
         "limits: %s" % (", ".join(unmet) or "none"))


def routes_load():
    """RROWS from OUTDIR/routes.tsv (BENCH_SCALE_ONLY=routes-report: the
    table of a finished run again)."""
    with open(os.path.join(OUT, "routes.tsv")) as f:
        next(f)
        for line in f:
            route, axis, size, w, cp, st, _ = line.rstrip("\n").split("\t")
            RROWS.append((route, axis, int(size), float(w), float(cp), int(st)))


def bench_routes():
    sys.path.insert(0, os.path.join(ROOT, "tests", "reliability"))
    sys.path.insert(0, HERE)
    routes_sizes()
    routes_session()
    routes_report()


def main():
    # BENCH_SCALE_ONLY=check: the /check series alone (a minute, not an
    # hour); =whole: the whole-session routes alone (WHOLE_SIZES);
    # =sessions: many sessions posting round-robin alone (SESS_SIZES);
    # =routes: every route of openapi.yaml at the default limits (goal 3);
    # =routes-report: that table again from OUTDIR/routes.tsv
    only = os.environ.get("BENCH_SCALE_ONLY", "")
    os.makedirs(OUT, exist_ok=True)
    t0 = time.time()
    if only in ("", "check"):
        bench_check()
    if only in ("", "whole"):
        bench_whole()
    if only in ("", "sessions"):
        bench_sessions()
    if only in ("", "routes"):
        bench_routes()
    if only == "routes-report":
        routes_load()
        routes_report()
    if only == "":
        bench_server()
        bench_cli()
    if only != "routes-report":
        report(plot=only == "")
    if GOALS:
        print("\n== issue 27 goals, this run (bench/README.md \"Issue 27 goals\")")
        print("\n".join(GOALS))
    print("total %.0f s" % (time.time() - t0))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`make bench-pg`: POST/s, latency and CPU per POST of adaptmon on PostgreSQL
(a primary and one synchronous standby on this machine) with 1, 2 and 3
adaptmon nodes and 1, 2, 4 and 8 group committers, beside SQLite (one node,
durability normal and full) in the same run. Method and figures:
bench/README.md, "PostgreSQL: nodes and committers".

usage: pg_nodes.py ADAPTMON OUTDIR

Every configuration gets a fresh database and fresh servers, is warmed for
WARM seconds, then loaded for DUR seconds by wrk with bench/post.lua (CONNS
connections in all, split over the nodes; each node posts its own NSESS/N
sessions, as a session-affine load balancer would route them). The
configurations run interleaved, RUNS rounds (default 3, rotated each round,
so a noisy minute hits different ones); every figure is the median of the
rounds. CPU per POST is the utime + stime (/proc/PID/stat) that the
adaptmon processes, the primary's postgres processes and the standby's
spent during the measured window, divided by the requests wrk completed.
PostgreSQL runs with fsync on, synchronous_commit on and
synchronous_standby_names 'ANY 1 (…)' (tests/ha/pgcluster.py; needs root,
as the HA suite does). Environment: RUNS, DUR, WARM, CONNS, NSESS, CONFIGS
(comma-separated names, default all). Servers are started and stopped here
(by pid).
"""
import os, re, signal, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "ha"))
import pgcluster  # noqa: E402

ADAPTMON, OUT = [os.path.abspath(a) for a in sys.argv[1:3]]
RUNS = int(os.environ.get("RUNS", "3"))
DUR = int(os.environ.get("DUR", "8"))
WARM = int(os.environ.get("WARM", "2"))
CONNS = int(os.environ.get("CONNS", "48"))
NSESS = int(os.environ.get("NSESS", "240"))
TICK = os.sysconf("SC_CLK_TCK")
TMP = tempfile.mkdtemp(prefix="adaptmon-bench-pg-")
SEGS = os.path.join(TMP, "segs.lua")
READY = re.compile(r"listening on (?:http://)?[^ ]*:(\d+)")
T0 = time.time()

# (name, backend, nodes, committers, durability)
ALL = [("sqlite-normal", "sqlite", 1, 1, "normal"), ("sqlite-full", "sqlite", 1, 1, "full")]
ALL += [("pg-n%d-k%d" % (n, k), "pg", n, k, None) for n in (1, 2, 3) for k in (1, 4)]
ALL += [("pg-n1-k%d" % k, "pg", 1, k, None) for k in (2, 8)]
WANT = os.environ.get("CONFIGS")
CONFIGS = [c for c in ALL if not WANT or c[0] in WANT.split(",")]


def log(*a):
    print("[bench-pg %5.0fs]" % (time.time() - T0), *a, flush=True)


def cpu_s(pids):
    """utime + stime of pids in seconds (a pid gone meanwhile counts 0)."""
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def pg_pids(node):
    pid = node.pid()
    return [pid] + pgcluster._children(pid) if pid else []


class Node:
    """adaptmon serve on a free port."""

    def __init__(self, db, extra):
        self.p = subprocess.Popen([ADAPTMON, "serve", "--port", "0", "--db", db, "--log-level",
                                   "error", *extra], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True,
                                  env=dict(os.environ, ADAPTMON_CONFIG=""))
        line = self.p.stdout.readline()
        m = READY.search(line)
        if not m:
            self.p.kill()
            raise SystemExit("adaptmon serve did not start: %r" % line)
        self.port = int(m.group(1))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=60)


def sessions(port, prefix, n):
    subprocess.run([sys.executable, os.path.join(HERE, "sessions.py"), "create", str(port),
                    prefix, str(n)], check=True, stdout=subprocess.DEVNULL)


def wrk_start(port, conns, run, prefix, nsess, duration):
    env = dict(os.environ, SEGS=SEGS, WRK_THREADS="1", RUN=run, PREFIX=prefix,
               SESSIONS=str(nsess))
    return subprocess.Popen(["wrk", "-t1", "-c%d" % conns, "-d%ds" % duration, "--timeout", "10s",
                             "-s", os.path.join(HERE, "post.lua"), "http://127.0.0.1:%d" % port],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wrk_result(p):
    out, err = p.communicate(timeout=120)
    m = re.search(r"RESULT (.*)", out)
    if not m:
        raise SystemExit("wrk failed: %s %s" % (out, err))
    return {k: float(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


def load(nodes, run, duration):
    """wrk against every node at once; the summed rate and the latencies."""
    n = len(nodes)
    ps = [wrk_start(nd.port, max(1, CONNS // n), "%s-%d" % (run, i), "p%d_" % i, NSESS // n,
                    duration) for i, nd in enumerate(nodes)]
    rs = [wrk_result(p) for p in ps]
    req = sum(r["requests"] for r in rs)
    return {
        "requests": req,
        "rps": sum(r["rps"] for r in rs),
        # request-weighted p50 of the nodes; the worst node's p99
        "p50_ms": sum(r["p50_ms"] * r["requests"] for r in rs) / max(req, 1),
        "p99_ms": max(r["p99_ms"] for r in rs),
        "non201": sum(r["non201"] + r["errors"] for r in rs),
    }


def one(cfg, cluster, rnd):
    name, backend, n, k, durability = cfg
    if backend == "sqlite":
        dbs = [os.path.join(TMP, "%s-%d.db" % (name, rnd))]
        extra = ["--durability", durability]
    else:
        dbname = ("b_%s_%d" % (name, rnd)).replace("-", "_")
        cluster.psql(cluster.primary, 'CREATE DATABASE "%s"' % dbname, timeout=60)
        dbs = [cluster.primary.dsn(dbname)]
        extra = ["--pg-committers", str(k), "--readers", "2"]
    nodes = []
    try:
        for i in range(n):
            nodes.append(Node(dbs[0], extra))
        for i, nd in enumerate(nodes):
            sessions(nd.port, "p%d_" % i, NSESS // n)
        load(nodes, "w%d" % rnd, WARM)  # schema caches, connections, sessions loaded
        am = [nd.p.pid for nd in nodes]
        prim = pg_pids(cluster.primary) if backend == "pg" else []
        stby = pg_pids(cluster.nodes[1]) if backend == "pg" else []
        c0 = (cpu_s(am), cpu_s(prim), cpu_s(stby))
        r = load(nodes, "m%d" % rnd, DUR)
        c1 = (cpu_s(am), cpu_s(prim), cpu_s(stby))
        req = max(r["requests"], 1)
        r["cpu_am_us"] = (c1[0] - c0[0]) * 1e6 / req
        r["cpu_pg_us"] = (c1[1] - c0[1]) * 1e6 / req
        r["cpu_sb_us"] = (c1[2] - c0[2]) * 1e6 / req
        return r
    finally:
        for nd in nodes:
            nd.stop()


def med(xs):
    return statistics.median(xs)


def main():
    os.makedirs(OUT, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(HERE, "tico.py"), "lua", SEGS], check=True)
    why = pgcluster.available()
    if why and any(c[1] == "pg" for c in CONFIGS):
        raise SystemExit("bench-pg: " + why)
    cluster = pgcluster.Cluster(standbys=1, sync="ANY 1", fsync=True,
                                extra=["max_connections = 100"]) \
        if any(c[1] == "pg" for c in CONFIGS) else None
    res = {c[0]: [] for c in CONFIGS}
    try:
        for rnd in range(RUNS):
            order = CONFIGS[rnd % len(CONFIGS):] + CONFIGS[:rnd % len(CONFIGS)]
            for cfg in order:
                r = one(cfg, cluster, rnd)
                res[cfg[0]].append(r)
                log("round %d %-14s %7.0f POST/s p50 %6.1f ms p99 %7.1f ms cpu/POST adaptmon "
                    "%5.0f us primary %5.0f us standby %4.0f us non-201 %d load %s" %
                    (rnd, cfg[0], r["rps"], r["p50_ms"], r["p99_ms"], r["cpu_am_us"],
                     r["cpu_pg_us"], r["cpu_sb_us"], r["non201"],
                     open("/proc/loadavg").read().split()[0]))
    finally:
        if cluster:
            cluster.close()
    base = med([r["rps"] for r in res[CONFIGS[0][0]]])
    lines = ["| configuration | POST/s | ratio to %s | p50 ms | p99 ms | CPU/POST adaptmon µs | "
             "primary µs | standby µs | non-201 |" % CONFIGS[0][0],
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, *_ in CONFIGS:
        rs = res[name]
        m = {k: med([r[k] for r in rs]) for k in rs[0]}
        lines.append("| %s | %.0f | %.2f | %.1f | %.1f | %.0f | %.0f | %.0f | %d |" %
                     (name, m["rps"], m["rps"] / base, m["p50_ms"], m["p99_ms"], m["cpu_am_us"],
                      m["cpu_pg_us"], m["cpu_sb_us"], sum(r["non201"] for r in rs)))
    text = "\n".join(lines) + "\n\nmedians of %d interleaved rounds, %d s each, %d connections, " \
        "%d sessions; nproc %d\n" % (RUNS, DUR, CONNS, NSESS, os.cpu_count())
    with open(os.path.join(OUT, "pg_nodes.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()

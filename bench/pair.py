#!/usr/bin/env python3
"""Two adaptmon binaries side by side: CPU per POST of each under the same load at the same time.

usage: pair.py ADAPTMON_A ADAPTMON_B ROUNDS

bench/cpu.py measures one binary at a time, and on this machine (2 shared cores) the CPU per POST
of one binary moves by ±10 % from one run to the next, so a 3 % change needs many alternating
runs. Here both binaries serve at once, each on its own temporary database with SESSIONS sessions
(default 1,000; standard profile, TICO-19 glossary, one segment posted to each first), each loaded
by its own wrk (-t1 -c32, bench/post.lua) for WARM seconds (default 2) and then DUR seconds
(default 20), started together: whatever else the machine does slows both alike. Each round
prints both CPU times per POST (utime + stime from /proc/PID/stat over the DUR seconds) and B/A;
the last line is the median B/A. Two copies of one binary gave B/A 0.989–1.012 (DUR 6).

DUR matters: the 1,000 sessions advance together, and a session settles its pending words every
32nd seq (schema/010). At ~2,800 POST/s per server, DUR 20 gives each session ~60 POSTs, two
settles each, close to the steady share of one in 32; DUR 6 gives ~26, often none.
Both serve with --threads THREADS (default 16, the server's default). Servers are started and
stopped here, by pid, on 127.0.0.1.
"""
import os, re, signal, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
A_BIN, B_BIN = [os.path.abspath(a) for a in sys.argv[1:3]]
ROUNDS = int(sys.argv[3])
DUR = int(os.environ.get("DUR", "20"))
WARM = int(os.environ.get("WARM", "2"))
NSESS = int(os.environ.get("SESSIONS", "1000"))
GLOSSARY = os.path.join(ROOT, "data", "glossaries", "tico19", "f_en-fr_XX.csv")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """utime + stime of pid in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def wrk(segs, port, run, duration, out):
    env = dict(os.environ, SEGS=segs, WRK_THREADS="1", RUN=run, SESSIONS=str(NSESS), DELAY_MS="0")
    o = subprocess.run(["wrk", "-t1", "-c32", "-d%ds" % duration, "--timeout", "10s", "-s",
                        os.path.join(HERE, "post.lua"), "http://127.0.0.1:%d" % port],
                       env=env, capture_output=True, text=True, check=True).stdout
    m = re.search(r"RESULT (.*)", o)
    out.update({k: float(v) for k, v in (kv.split("=") for kv in m.group(1).split())})


def one_round(k):
    """B's CPU per POST over A's, both loaded at once; prints the round."""
    tmp = tempfile.mkdtemp(prefix="adaptmon-pair-")
    segs = os.path.join(tmp, "segs.lua")
    procs = []
    try:
        subprocess.run([sys.executable, os.path.join(HERE, "tico.py"), "lua", segs], check=True)
        base = 19900 + (os.getpid() % 40) * 2
        for i, b in enumerate((A_BIN, B_BIN)):
            port = base + i
            p = subprocess.Popen([b, "serve", "--port", str(port), "--db",
                                  os.path.join(tmp, "%d.db" % i), "--durability", "normal",
                                  "--log-level", "error", "--threads", os.environ.get("THREADS", "16")],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            procs.append((p, port))
            assert "listening" in p.stdout.readline()
        for p, port in procs:
            for cmd in (["create", str(port), "b", str(NSESS), GLOSSARY],
                        ["post1", str(port), "b", str(NSESS)]):
                subprocess.run([sys.executable, os.path.join(HERE, "sessions.py")] + cmd, check=True)

        def both(run, dur):
            res = [{}, {}]
            ts = [threading.Thread(target=wrk, args=(segs, port, run, dur, res[i]))
                  for i, (p, port) in enumerate(procs)]
            c0 = [cpu_s(p.pid) for p, _ in procs]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            c1 = [cpu_s(p.pid) for p, _ in procs]
            return [(c1[i] - c0[i]) / res[i]["requests"] * 1e6 for i in range(2)], res

        both("w", WARM)
        us, res = both("m", DUR)
    finally:
        for p, _ in procs:
            p.send_signal(signal.SIGTERM)
            p.wait()
        subprocess.run(["rm", "-rf", tmp])
    print("round %d  A %.1f us (%d POST/s, non-201: %d)  B %.1f us (%d POST/s, non-201: %d)  "
          "B/A %.3f" % (k, us[0], res[0]["rps"], res[0]["non201"], us[1], res[1]["rps"],
                        res[1]["non201"], us[1] / us[0]), flush=True)
    return us[1] / us[0]


def main():
    rs = sorted(one_round(k) for k in range(ROUNDS))
    print("median B/A %.3f  (min %.3f, max %.3f, %d rounds, DUR %d s)"
          % (rs[len(rs) // 2], rs[0], rs[-1], ROUNDS, DUR))


if __name__ == "__main__":
    main()

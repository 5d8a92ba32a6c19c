#!/usr/bin/env python3
"""Server CPU per POST against the HTTP echo's CPU per request, same run (issue 12).

usage: cpu.py ADAPTMON HTTP_CEILING [--durability normal|full] [--perf OUT.data] [--latency]
       cpu.py ADAPTMON HTTP_CEILING --callgrind OUT.cg

Starts the echo (bench/http_ceiling.c) and then adaptmon serve on 127.0.0.1
(temporary database, 1,000 sessions, standard profile, TICO-19 glossary),
drives each with bench/post.lua under wrk (-t2 -c64, DUR seconds, default 8,
after one segment posted to each session, which builds its scorer, and a
WARM-second warm-up, default 4)
and prints the process's CPU time (utime + stime from /proc/PID/stat) per
answered request. The ratio is the figure the issue sets a target for
(<= 30x). With --perf, `perf record --call-graph $CALLGRAPH` (fp; dwarf
for inclusive costs) samples the server during the
measured run. With --latency, two more runs paced at 50 % and 90 % of the
measured POST/s (each of the 64 connections waits 64,000 / rate ms before a
request) give p50/p99 below saturation. Servers are started and stopped
here, by pid. `make bench` runs it (normal with --latency, and full).
The server runs with its default --threads unless THREADS is set (THREADS=4
compares with the default of the sessions before the tenth); the server's
VmHWM is printed after the runs.

With --callgrind OUT (no perf counters needed: instructions, not time) the
server runs under valgrind's callgrind (SESSIONS sessions, default 1,000 —
use 200); after the scorers are built and the warm-up the counters are
zeroed, then wrk -c16 runs DUR seconds and the counters are dumped into OUT
with the number of answered POSTs printed, so `callgrind_annotate
--inclusive=yes OUT` divided by that number is the instructions per POST of
each function (every thread: the handlers, the group commit, the
checkpointer). The echo is not run then.
"""
import os, re, signal, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADAPTMON, HTTPC = [os.path.abspath(a) for a in sys.argv[1:3]]
DUR = int(os.environ.get("DUR", "8"))
WARM = int(os.environ.get("WARM", "4"))
NSESS = int(os.environ.get("SESSIONS", "1000"))
GLOSSARY = os.path.join(ROOT, "data", "glossaries", "tico19", "f_en-fr_XX.csv")
TMP = tempfile.mkdtemp(prefix="adaptmon-cpu-")
SEGS = os.path.join(TMP, "segs.lua")
READY = re.compile(r"listening on (?:http://)?[^ ]*:(\d+)")


def ready_port(proc, what):
    """The port in the first stdout line of proc, started on port 0."""
    line = proc.stdout.readline()
    m = READY.search(line)
    if not m:
        raise SystemExit("%s did not start: %r" % (what, line))
    return int(m.group(1))
TICK = os.sysconf("SC_CLK_TCK")


def opt(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def cpu_s(pid):
    """utime + stime of pid in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def wrk(port, run, duration, delay_ms=0):
    env = dict(os.environ, SEGS=SEGS, WRK_THREADS="2", RUN=run, SESSIONS=str(NSESS),
               DELAY_MS=str(delay_ms))
    out = subprocess.run(["wrk", "-t2", "-c64", "-d%ds" % duration, "--timeout", "10s", "-s",
                          os.path.join(HERE, "post.lua"), "http://127.0.0.1:%d" % port],
                         env=env, capture_output=True, text=True, check=True).stdout
    m = re.search(r"RESULT (.*)", out)
    return {k: float(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


def measure(pid, port, run, perf_out=None):
    """(requests/s, CPU seconds per request, non-2xx answers) of one DUR-second run."""
    pr = None
    if perf_out:
        pr = subprocess.Popen(["perf", "record", "-q", "-F", "499", "--call-graph", os.environ.get("CALLGRAPH", "fp"), "-o", perf_out, "-p", str(pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c0 = cpu_s(pid)
    r = wrk(port, run, DUR)
    c1 = cpu_s(pid)
    if pr:
        pr.send_signal(signal.SIGINT)
        pr.wait()
    n = r["requests"]
    return r["rps"], (c1 - c0) / n, r["non201"]


def callgrind(out):
    """Instructions of the server (every thread) over a DUR-second run
    under callgrind, zeroed after the warm-up, into out."""
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                          "--dump-instr=no", ADAPTMON, "serve", "--port", "0",
                          "--db", os.path.join(TMP, "cpu.db"), "--log-level", "error",
                          "--durability", opt("--durability", "normal"),
                          "--request-timeout-ms", "600000"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = ready_port(p, "adaptmon serve (callgrind)")
    for cmd in (["create", str(port), "b", str(NSESS), GLOSSARY], ["post1", str(port), "b", str(NSESS)]):
        subprocess.run([sys.executable, os.path.join(HERE, "sessions.py"), *cmd], check=True)
    wrk(port, "w", WARM)
    subprocess.run(["callgrind_control", "--zero", str(p.pid)], check=True, capture_output=True)
    env = dict(os.environ, SEGS=SEGS, WRK_THREADS="2", RUN="m", SESSIONS=str(NSESS), DELAY_MS="0")
    res = subprocess.run(["wrk", "-t2", "-c16", "-d%ds" % DUR, "--timeout", "60s", "-s",
                          os.path.join(HERE, "post.lua"), "http://127.0.0.1:%d" % port],
                         env=env, capture_output=True, text=True, check=True).stdout
    r = {k: float(v) for k, v in (kv.split("=") for kv in re.search(r"RESULT (.*)", res).group(1).split())}
    subprocess.run(["callgrind_control", "--dump=measured", str(p.pid)], check=True, capture_output=True)
    p.send_signal(signal.SIGTERM)
    p.wait()
    print("callgrind %d POSTs answered (non-201: %d) in %s (the dump named 'measured')"
          % (r["requests"], r["non201"], out))


def main():
    subprocess.run([sys.executable, os.path.join(HERE, "tico.py"), "lua", SEGS], check=True)
    if opt("--callgrind"):
        callgrind(os.path.abspath(opt("--callgrind")))
        subprocess.run(["rm", "-rf", TMP])
        return
    hp = subprocess.Popen([HTTPC, "0", "4"], stdout=subprocess.PIPE, text=True)
    hport = ready_port(hp, "http_ceiling")
    wrk(hport, "hw", 2)
    echo = measure(hp.pid, hport, "h")
    hp.send_signal(signal.SIGTERM)
    hp.wait()
    dur = opt("--durability", "normal")
    p = subprocess.Popen([ADAPTMON, "serve", "--port", "0", "--db", os.path.join(TMP, "cpu.db"),
                          "--durability", dur, "--log-level", "error",
                          *(["--threads", os.environ["THREADS"]] if os.environ.get("THREADS") else [])],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    PORT = ready_port(p, "adaptmon serve")
    subprocess.run([sys.executable, os.path.join(HERE, "sessions.py"), "create", str(PORT), "b", str(NSESS),
                    GLOSSARY], check=True)
    # every session's scorer is built before the measured run (building one parses the glossary)
    subprocess.run([sys.executable, os.path.join(HERE, "sessions.py"), "post1", str(PORT), "b", str(NSESS)],
                   check=True)
    wrk(PORT, "w", WARM)
    srv = measure(p.pid, PORT, "m", opt("--perf"))
    paced = []
    if "--latency" in sys.argv:
        for frac in (0.5, 0.9):
            delay = max(1, int(round(64 * 1000 / (frac * srv[0]))))
            paced.append((frac, wrk(PORT, "l%d" % int(frac * 100), DUR, delay)))
    with open("/proc/%d/status" % p.pid) as f:
        hwm = [int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")][0]
    p.send_signal(signal.SIGTERM)
    p.wait()
    with open("/proc/loadavg") as f:
        la = " ".join(f.read().split()[:3])
    print("echo      %8.0f req/s  %7.1f us CPU/request" % (echo[0], echo[1] * 1e6))
    print("adaptmon  %8.0f POST/s %7.1f us CPU/POST (%s; non-201: %d)" % (srv[0], srv[1] * 1e6, dur, srv[2]))
    print("ratio     %8.1f x      load average %s; server VmHWM %.1f MiB" % (srv[1] / echo[1], la, hwm / 1024))
    for frac, r in paced:
        print("paced %2d%% %8.0f POST/s p50 %.2f ms p99 %.2f ms (non-201: %d)"
              % (frac * 100, r["rps"], r["p50_ms"], r["p99_ms"], r["non201"]))
    subprocess.run(["rm", "-rf", TMP])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Hostile pass, third session (issue 10, "Repeat your own hostile pass"):
the worst inputs the limits allow, found by probing a spawned server; every
test here failed on the code before its fix (tests/RELIABILITY.md, "Hostile
pass (third session)", lists everything tried, also what was fine).

  * file descriptors: idle connections up to --max-connections must not take
    the descriptors SQLite and the server need. With the open-files limit
    below max-connections, 100 idle sockets made a POST on an open
    connection answer 500 (SQLite could not open the -wal file) and /readyz
    fail. The server now raises its soft limit to the hard one and, if that
    is still too low, serves fewer connections (with a warning) instead.
  * a config file that sets the same option twice is refused (exit 2, both
    line numbers) instead of silently taking the last value.
"""
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rel  # noqa: E402,F401  (sets up the harness path)
from harness import ADAPTMON, Skip, check, eq, free_port, run_tests, tmpdir  # noqa: E402


def need_real_limits():
    """valgrind keeps descriptors of its own below the limit and does not let
    the program raise it, so the descriptor arithmetic cannot be tested there"""
    if os.environ.get("VALGRIND") == "1":
        raise Skip("valgrind reserves descriptors and pins RLIMIT_NOFILE")


def spawn(soft, hard, *args):
    """`adaptmon serve` on a fresh database with RLIMIT_NOFILE (soft, hard);
    returns (process, port, stdout path). Caller stops the process."""
    d = tmpdir("adaptmon-h2-")
    port = free_port()
    out = os.path.join(d, "out.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    with open(out, "wb") as f:
        p = subprocess.Popen([ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", str(port),
                              "--db", os.path.join(d, "x.db")] + list(args),
                             stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=env, cwd=d, preexec_fn=limit)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(out, "rb") as f:
            if b"adaptmon listening on" in f.read():
                return p, port, out
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    with open(out, "rb") as f:
        raise AssertionError("serve did not start: %r" % f.read()[-2000:])


def call(c, method, path, body=None):
    h = {"Content-Type": "application/json"} if body is not None else {}
    c.request(method, path, json.dumps(body) if body is not None else None, h)
    r = c.getresponse()
    return r.status, r.read()


def stop(p):
    p.terminate()
    try:
        return p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def test_idle_connections_cannot_starve_the_database_of_descriptors():
    need_real_limits()
    p, port, out = spawn(64, 64, "--threads", "2", "--conn-timeout", "30")
    idle = []
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        st, b = call(c, "POST", "/v1/sessions", {"id": "fd", "source_lang": "en",
                                                   "target_lang": "fr"})
        eq(st, 201, "create: %r" % b[:200])
        # 100 idle sockets: more than the 64 descriptors the process may hold
        for _ in range(100):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        time.sleep(1.0)  # let the server accept all it will
        for i in range(3):
            st, b = call(c, "POST", "/v1/sessions/fd/segments",
                         {"id": "s%d" % i, "hypothesis": "a b", "translation": "a c"})
            eq(st, 201, "POST on an open connection while 100 sockets idle: %r" % b[:300])
        st, b = call(c, "GET", "/readyz")
        eq(st, 200, "/readyz while 100 sockets idle: %r" % b[:300])
        st, b = call(c, "GET", "/v1/sessions/fd/segments")
        eq(st, 200, "list: %r" % b[:300])
        eq([s["id"] for s in json.loads(b)["segments"]], ["s0", "s1", "s2"], "stored")
        c.close()
        with open(out, "rb") as f:
            log = f.read().decode("utf-8", "replace")
        check("max-connections" in log and "open files" in log,
              "a warning names max-connections and the open-files limit: %r" % log[-1500:])
    finally:
        for s in idle:
            s.close()
        eq(stop(p), 0, "exit status")


def test_soft_open_files_limit_is_raised_to_fit_max_connections():
    need_real_limits()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 4096:
        print("  (skipped: hard open-files limit %d is below 4096)" % hard)
        return
    p, port, out = spawn(64, hard, "--max-connections", "1024")
    try:
        with open("/proc/%d/limits" % p.pid) as f:
            line = [ln for ln in f if ln.startswith("Max open files")][0]
        soft = line.split()[3]
        check(soft == "unlimited" or int(soft) > 1024,
              "soft open-files limit raised above max-connections: %r" % line)
        with open(out, "rb") as f:
            log = f.read().decode("utf-8", "replace")
        check("open files" not in log, "no warning when the limit could be raised: %r" % log)
    finally:
        eq(stop(p), 0, "exit status")


def test_config_file_setting_an_option_twice_is_refused():
    d = tmpdir("adaptmon-h2-")
    conf = os.path.join(d, "a.conf")
    with open(conf, "w") as f:
        f.write("# sizes\nthreads = 2\nmax-body = 1MiB\nthreads = 3\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
    try:
        p = subprocess.run([ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", "0", "--config",
                            conf, "--db", os.path.join(d, "x.db")],
                           capture_output=True, text=True, timeout=8, env=env)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("serve started with the option set twice: %r" % e.stdout)
    eq(p.returncode, 2, "exit status (stdout %r, stderr %r)" % (p.stdout[-300:], p.stderr[-300:]))
    check("threads" in p.stderr and "2" in p.stderr and "4" in p.stderr,
          "message names the option and both lines: %r" % p.stderr)
    check(not os.path.exists(os.path.join(d, "x.db")), "no database created")


if __name__ == "__main__":
    run_tests(globals())

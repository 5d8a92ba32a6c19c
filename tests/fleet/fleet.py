"""Shared code of the fleet tests: adaptmon instances on fixed loopback
ports (so they can be restarted where the router expects them) and HAProxy
run with deploy/haproxy/haproxy.cfg, only its addresses substituted.
Builds on tests/api/harness.py (Client, run_tests, clean-up at exit)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
import harness  # noqa: E402
from harness import Client, ROOT, ADAPTMON, tmpdir, free_port  # noqa: E402,F401

HAPROXY_CFG = os.path.join(ROOT, "deploy", "haproxy", "haproxy.cfg")
HAPROXY_LUA = os.path.join(ROOT, "deploy", "haproxy", "adaptmon.lua")


def wait_ready(port, proc, timeout=15.0, path="/readyz"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            c = Client(port)
            r = c.request("GET", path)
            c.close()
            if r.status == 200:
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


class Instance:
    """`adaptmon serve` on 127.0.0.1:port (fixed), database db."""

    def __init__(self, name, port, db, args=(), env=None):
        self.name, self.port, self.db, self.args = name, port, db, list(args)
        self.extra_env = env or {}
        self.proc = None
        self.dir = os.path.dirname(db)

    def start(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
        env.update(self.extra_env)
        self.err_path = os.path.join(self.dir, "%s-stderr.log" % self.name)
        err = open(self.err_path, "ab")
        cmd = [ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", str(self.port),
               "--db", self.db, "--log-level", "warn"] + self.args
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                     stdin=subprocess.DEVNULL, cwd=self.dir, env=env)
        err.close()
        harness._servers.append(self)
        if not wait_ready(self.port, self.proc):
            raise AssertionError("%s did not start: %s" % (self.name, self.logs()))
        return self

    def logs(self):
        try:
            with open(self.err_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-3000:]
        except OSError:
            return ""

    def client(self):
        return Client(self.port)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.proc = None
        if self in harness._servers:
            harness._servers.remove(self)
        return rc

    def kill(self):
        return self.stop(signal.SIGKILL)


def router_config(shard_ports, bind_port, lua=HAPROXY_LUA):
    """deploy/haproxy/haproxy.cfg with the addresses of this test: the
    shipped servers adaptmon-K.adaptmon:8080 become 127.0.0.1:PORT, the bind
    address 127.0.0.1:bind_port, and lua-load the file in the tree."""
    with open(HAPROXY_CFG, encoding="utf-8") as f:
        text = f.read()
    subs = 0
    for k, port in enumerate(shard_ports):
        text, n = re.subn(r"\badaptmon-%d\.adaptmon:8080\b" % k, "127.0.0.1:%d" % port, text)
        subs += n
    text, n = re.subn(r"(?m)^(\s*bind\s+):8080\b", r"\g<1>127.0.0.1:%d" % bind_port, text)
    subs += n
    text, n = re.subn(r"/etc/haproxy/adaptmon\.lua", lua, text)
    subs += n
    if re.search(r"adaptmon-\d+\.adaptmon:8080", text):
        raise AssertionError("the shipped haproxy.cfg lists more servers than the test runs")
    return text, subs


class Router:
    """HAProxy with a generated config file."""

    def __init__(self, cfg_text, port, workdir):
        self.port = port
        self.cfg = os.path.join(workdir, "haproxy.cfg")
        with open(self.cfg, "w", encoding="utf-8") as f:
            f.write(cfg_text)
        self.log_path = os.path.join(workdir, "haproxy.log")
        self.proc = None

    def check(self):
        r = subprocess.run(["haproxy", "-c", "-f", self.cfg], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", self.cfg], stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        harness._servers.append(self)
        if not wait_ready(self.port, self.proc, path="/healthz"):
            raise AssertionError("haproxy did not start: " + self.logs())
        return self

    def logs(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-3000:]
        except OSError:
            return ""

    def client(self):
        return Client(self.port)

    def kill(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self in harness._servers:
            harness._servers.remove(self)


def have(prog):
    return shutil.which(prog) is not None


def segment(i, sid):
    """A small segment whose words repeat across segments (so R1 counts)."""
    words = ["maison", "chat", "jardin", "voiture", "livre", "table"]
    w1, w2 = words[i % len(words)], words[(i + sid) % len(words)]
    return {"id": "seg-%d" % i,
            "source": "The %s and the %s number %d." % ("house", "garden", i),
            "hypothesis": "La %s et le %s numéro %d." % (w1, w2, i),
            "translation": "Le %s et la %s numéro %d." % (w2, w1, i)}

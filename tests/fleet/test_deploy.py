"""Deployment files: the systemd unit (systemd-analyze verify, and the
server's sd_notify protocol seen from a NOTIFY_SOCKET), the Kubernetes
manifests (yamllint + the structure the README promises), the Dockerfile
(stages, user, volume, health check, runtime libraries = what the binary
links) and the generated example configuration. Python standard library,
systemd-analyze and yamllint (tools/deps.sh installs them)."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import ADAPTMON, ROOT, free_port, have, tmpdir  # noqa: E402
from harness import check, eq, run_tests  # noqa: E402

DEPLOY = os.path.join(ROOT, "deploy")


def read(*p):
    with open(os.path.join(ROOT, *p), encoding="utf-8") as f:
        return f.read()


def test_router_problems_are_the_servers_problem_types():
    """The answers HAProxy writes itself (deploy/haproxy/haproxy.cfg) use the
    server's problem types: slug, status and title as in server/base/problem.c
    (a client tells errors apart by type, whoever answered)."""
    table = {m.group(1): (int(m.group(2)), m.group(3)) for m in re.finditer(
        r'\{"([a-z0-9-]+)",\s*(\d+),\s*"([^"]+)"\}', read("server", "base", "problem.c"))}
    check(len(table) >= 20, "problem types parsed from problem.c: %d" % len(table))
    cfg = read("deploy", "haproxy", "haproxy.cfg")
    bodies = re.findall(r"http-request return status (\d+) content-type application/problem\+json "
                        r"string '([^']*)'", cfg)
    check(len(bodies) >= 2, "problem answers in haproxy.cfg: %d" % len(bodies))
    for status, body in bodies:
        b = json.loads(body)
        slug = b["type"].rsplit("/", 1)[-1]
        check(b["type"] == "https://adaptmon.dev/problems/" + slug, "type URI %r" % b["type"])
        check(slug in table, "haproxy.cfg answers an unknown problem type %r" % slug)
        eq((int(status), b["status"], b["title"]), (table[slug][0], table[slug][0], table[slug][1]),
           "haproxy.cfg's %s answer: HTTP status, status and title" % slug)


def test_systemd_unit_verifies():
    if not have("systemd-analyze"):
        raise AssertionError("systemd-analyze missing (tools/deps.sh installs systemd)")
    unit = read("deploy", "systemd", "adaptmon.service")
    for opt in ("Type=notify", "WatchdogSec=", "StateDirectory=adaptmon", "DynamicUser=yes",
                "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
                "NoNewPrivileges=yes", "RestrictAddressFamilies=", "MemoryDenyWriteExecute=yes",
                "SystemCallFilter=@system-service"):
        check(opt in unit, "adaptmon.service sets " + opt)
    d = tmpdir("adaptmon-unit-")
    path = os.path.join(d, "adaptmon.service")
    with open(path, "w", encoding="utf-8") as f:  # ExecStart at the built binary
        f.write(unit.replace("/usr/local/bin/adaptmon", ADAPTMON))
    r = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True)
    eq((r.returncode, r.stderr.strip()), (0, ""), "systemd-analyze verify")


def test_sd_notify_ready_watchdog_stopping():
    d = tmpdir("adaptmon-notify-")
    sock_path = os.path.join(d, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.settimeout(0.2)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
    env.update(NOTIFY_SOCKET=sock_path, WATCHDOG_USEC="200000")
    port = free_port()
    proc = subprocess.Popen([ADAPTMON, "serve", "--port", str(port), "--db",
                             os.path.join(d, "a.db")], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    got = []

    def wait_for(word, secs=10):
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            try:
                got.append(sock.recv(4096).decode())
            except socket.timeout:
                pass
            if any(word in m.split("\n") for m in got):
                return True
        return False

    try:
        check(wait_for("READY=1"), "READY=1 received: %r" % got)
        ready = [m for m in got if "READY=1" in m][0]
        check("STATUS=serving http://127.0.0.1:%d" % port in ready, "STATUS in %r" % ready)
        # READY comes after the socket listens
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
        got.clear()
        check(wait_for("WATCHDOG=1", 3), "WATCHDOG=1 within 3 s at WATCHDOG_USEC=200000")
        got.clear()
        proc.send_signal(signal.SIGTERM)
        check(wait_for("STOPPING=1"), "STOPPING=1 after SIGTERM: %r" % got)
        eq(proc.wait(15), 0, "exit status after SIGTERM")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        sock.close()


def test_k8s_manifests_lint_and_shape():
    if not have("yamllint"):
        raise AssertionError("yamllint missing (tools/deps.sh installs it)")
    k8s = os.path.join(DEPLOY, "k8s")
    files = sorted(os.path.join(k8s, f) for f in os.listdir(k8s) if f.endswith(".yaml"))
    r = subprocess.run(["yamllint", "-s", "-c", os.path.join(k8s, ".yamllint")] + files,
                       capture_output=True, text=True)
    eq((r.returncode, r.stdout.strip()), (0, ""), "yamllint of the manifests")
    app = read("deploy", "k8s", "adaptmon.yaml")
    for want in ("kind: StatefulSet", "volumeClaimTemplates:", "clusterIP: None",
                 "kind: ConfigMap", "path: /healthz", "path: /readyz", "requests:",
                 "limits:", "ADAPTMON_OWNER_MAP", "mountPath: /var/lib/adaptmon"):
        check(want in app, "adaptmon.yaml has " + want)
    router = read("deploy", "k8s", "router.yaml")
    for want in ("kind: Deployment", "name: adaptmon-router", "/etc/haproxy/haproxy.cfg"):
        check(want in router, "router.yaml has " + want)
    # the router's servers are the StatefulSet's pods, named as the owner map names them
    cfg = read("deploy", "haproxy", "haproxy.cfg")
    replicas = int(re.search(r"replicas: (\d+)", app).group(1))
    for k in range(replicas):
        check("server adaptmon-%d adaptmon-%d.adaptmon:8080" % (k, k) in cfg,
              "haproxy.cfg lists pod adaptmon-%d" % k)
        check("adaptmon-%d=http://adaptmon-%d.adaptmon:8080" % (k, k) in app,
              "owner map lists pod adaptmon-%d" % k)


def _linked_packages():
    """Debian packages of the shared libraries the binary links directly."""
    # under VALGRIND=1, ADAPTMON is a wrapper script; the ELF is ADAPTMON_REAL
    binary = os.environ.get("ADAPTMON_REAL") or ADAPTMON
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                        subprocess.run(["readelf", "-d", binary], capture_output=True,
                                       text=True).stdout)
    paths = dict(re.findall(r"^\s*(\S+) => (\S+)", subprocess.run(
        ["ldd", binary], capture_output=True, text=True).stdout, re.M))
    # a sanitizer build (make asan) links the sanitizer runtimes; the image does not
    needed = [n for n in needed if not re.match(r"lib(asan|ubsan|lsan|tsan)\.so", n)]
    pkgs = set()
    for lib in needed:
        real = os.path.realpath(paths[lib])
        out = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True).stdout
        if not out:  # /lib → /usr/lib merge: ask for the path as ldd gave it
            out = subprocess.run(["dpkg", "-S", paths[lib]], capture_output=True, text=True).stdout
        pkgs.add(out.split(":")[0])
    return needed, pkgs


def test_dockerfile():
    text = read("Dockerfile")
    stages = re.findall(r"(?m)^FROM\s+(\S+)", text)
    eq(stages, ["debian:bookworm", "debian:bookworm-slim"], "build and runtime stages")
    build, runtime = re.split(r"(?m)^FROM debian:bookworm-slim", text)
    check("make deps" in build and re.search(r"&& make \\", build), "build runs make deps + make")
    for t in ("deps", "all"):
        eq(subprocess.run(["make", "-n", t], cwd=ROOT, capture_output=True).returncode, 0,
           "make -n " + t)
    check(re.search(r"(?m)^USER adaptmon", runtime), "runs as the adaptmon user")
    check('VOLUME ["/var/lib/adaptmon"]' in runtime, "data volume")
    check(re.search(r"(?m)^HEALTHCHECK .*\n.*curl -fsS .*/healthz", runtime), "health check")
    check("ADAPTMON_DB=/var/lib/adaptmon/adaptmon.db" in runtime, "database in the volume")
    needed, pkgs = _linked_packages()
    check(len(needed) >= 6, "NEEDED libraries: %r" % needed)
    install = re.search(r"apt-get install[^\n]*\\\n((?:.*\\\n)+)", runtime).group(1)
    for p in sorted(pkgs - {"libc6"}):  # libc6 is in every Debian image
        check(re.search(r"\b%s\b" % re.escape(p), install), "runtime image installs " + p)
    ignore = read(".dockerignore")
    for pat in ("build-*", ".git", "*.db"):
        check(pat in ignore.split(), ".dockerignore has " + pat)


def test_config_example_is_generated():
    out = subprocess.run([ADAPTMON, "config-example"], capture_output=True, text=True).stdout
    eq(out, read("deploy", "adaptmon.conf.example"), "deploy/adaptmon.conf.example is current")


def test_owner_map_errors_refuse_to_start():
    for bad, why in (("self=x; a=http://h:1", "names no listed instance"),
                     ("self=a; a=ftp://h:1", "http://"),
                     ("self=a; a=http://h:1; a=http://h:2", "twice"),
                     ("self=a; junk", "NAME=URL")):
        r = subprocess.run([ADAPTMON, "serve", "--port", "0", "--db", ":memory:",
                            "--owner-map", bad], capture_output=True, text=True, timeout=10)
        eq(r.returncode, 2, "exit status for owner map %r" % bad)
        check(why in r.stderr, "message for %r: %r" % (bad, r.stderr))


if __name__ == "__main__":
    sys.exit(run_tests(globals()))

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


def _stage_install(stage):
    """The packages of a stage's `apt-get install` (continuation lines)."""
    m = re.search(r"apt-get install[^\n]*\\\n((?:[^\n]*\\\n)+)", stage)
    check(m, "an apt-get install in the stage")
    words = re.findall(r"[^\s\\]+", m.group(1).split("&&")[0])
    return set(words)


def _deps_sh(var):
    """A variable of tools/deps.sh (VAR="…" over continuation lines) as a set."""
    m = re.search(r'(?ms)^%s="(.*?)"' % var, read("tools", "deps.sh"))
    check(m, "tools/deps.sh sets " + var)
    return set(m.group(1).replace("\\\n", " ").split())


def _owner(path):
    # the path as named first (a -dev package owns the lib*.so symlink), then
    # its target (/lib → /usr/lib merge)
    out = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True).stdout or \
        subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True,
                       text=True).stdout
    check(out, "a Debian package owns %s" % path)
    return out.split(":")[0]


def _build_needs():
    """The Debian packages `make all` needs, found from the Makefile: the
    owner of each PKGS library's .pc file and of -lstemmer's .so, iso-codes
    (ISO_CODES), the compiler, make and pkg-config."""
    mk = read("Makefile")
    pkgs = re.search(r"(?m)^PKGS\s*\?=\s*(.+)$", mk).group(1).split()
    need = {"gcc", "libc6-dev", "make", "pkg-config"}
    for p in pkgs:
        d = subprocess.run(["pkg-config", "--variable=pcfiledir", p], capture_output=True,
                           text=True).stdout.strip()
        need.add(_owner(os.path.join(d, p + ".pc")))
    ldlibs = re.search(r"(?m)^LDLIBS\s*:=(.+)$", mk).group(1)
    # variables the line names with a plain value (MECAB_LIBS ?= -lmecab)
    ldlibs = re.sub(r"\$\((\w+)\)", lambda m: (re.search(
        r"(?m)^%s\s*[?:]?=\s*(-l.*)$" % m.group(1), mk) or re.match("()", "")).group(1), ldlibs)
    for lib in re.findall(r"-l(\w+)", ldlibs):
        if lib in ("pthread", "m"):
            continue  # libc6-dev
        arch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True,
                              text=True).stdout.strip()
        need.add(_owner("/usr/lib/%s/lib%s.so" % (arch, lib)))
    iso = re.search(r"(?m)^ISO_CODES\s*\?=\s*(\S+)", mk).group(1)
    need.add(_owner(os.path.join(iso, "iso_639-3.json")))
    return need


def test_dockerfile():
    text = read("Dockerfile")
    stages = re.findall(r"(?m)^FROM\s+(\S+)", text)
    eq(stages, ["debian:bookworm", "debian:bookworm-slim"], "build and runtime stages")
    build, runtime = re.split(r"(?m)^FROM debian:bookworm-slim", text)
    build = build[build.index("FROM debian:bookworm AS build"):]
    # the build stage installs what `make all` needs, and only that
    installed = _stage_install(build)
    eq(installed, _deps_sh("BUILD_PKGS"), "build stage installs tools/deps.sh's BUILD_PKGS")
    eq(installed, _build_needs(), "build stage installs exactly what the Makefile needs")
    for heavy in ("chromium", "valgrind", "haproxy", "clang", "nodejs", "libcmocka-dev"):
        check(heavy not in installed, "build stage does not install " + heavy)
    check("make deps" not in build, "build stage does not run make deps (the test toolchain)")
    check(re.search(r"(?m)^RUN make all \\$", build), "build stage runs make all")
    for t in ("deps", "all"):
        eq(subprocess.run(["make", "-n", t], cwd=ROOT, capture_output=True).returncode, 0,
           "make -n " + t)
    check(re.search(r"(?m)^USER adaptmon", runtime), "runs as the adaptmon user")
    check('VOLUME ["/var/lib/adaptmon"]' in runtime, "data volume")
    check(re.search(r"(?m)^HEALTHCHECK .*\n.*curl -fsS .*/healthz", runtime), "health check")
    check("ADAPTMON_DB=/var/lib/adaptmon/adaptmon.db" in runtime, "database in the volume")
    # docker stop's grace period (documented --stop-timeout) exceeds shutdown-timeout-ms
    ms = int(re.search(r"ADAPTMON_SHUTDOWN_TIMEOUT_MS=(\d+)", runtime).group(1))
    stop = [int(x) for x in re.findall(r"--stop-timeout (\d+)", text)]
    check(stop and all(s * 1000 > ms for s in stop),
          "documented --stop-timeout %r s exceeds shutdown-timeout-ms %d" % (stop, ms))
    check("ADAPTMON_WRITE_TOKEN" in text and "--env-file" in text,
          "docker run with tokens is documented")
    needed, pkgs = _linked_packages()
    check(len(needed) >= 6, "NEEDED libraries: %r" % needed)
    install = re.search(r"apt-get install[^\n]*\\\n((?:.*\\\n)+)", runtime).group(1)
    for p in sorted(pkgs - {"libc6"}):  # libc6 is in every Debian image
        check(re.search(r"\b%s\b" % re.escape(p), install), "runtime image installs " + p)
    ignore = read(".dockerignore")
    for pat in ("build-*", ".git", "*.db"):
        check(pat in ignore.split(), ".dockerignore has " + pat)


def test_dockerfile_build_stage_commands_build():
    """No Docker engine here: the build stage's commands after COPY run in a
    copy of the build context (.dockerignore applied), as the image would
    run them, and the binary answers `version`."""
    if os.environ.get("VALGRIND") == "1":
        from harness import Skip
        raise Skip("a compile of the build context, not the binary under test: the plain run has it")
    text = read("Dockerfile")
    build = text[text.index("FROM debian:bookworm AS build"):text.index("FROM debian:bookworm-slim")]
    after_copy = build[build.index("COPY . ."):]
    cmds = [re.sub(r"\\\n\s*", " ", m).strip()
            for m in re.findall(r"(?ms)^RUN (.*?)(?<!\\)\n", after_copy + "\n")]
    eq(len(cmds), 1, "one RUN after COPY: %r" % cmds)
    ignore = [ln.strip() for ln in read(".dockerignore").splitlines()
              if ln.strip() and not ln.startswith("#")]
    ctx = os.path.join(tmpdir("adaptmon-docker-"), "src")
    shutil.copytree(ROOT, ctx, symlinks=True, ignore=shutil.ignore_patterns(
        *[p.replace("**/", "") for p in ignore]))
    for p in ("build", "adaptmon", ".git"):
        check(not os.path.exists(os.path.join(ctx, p)), "%s is not in the context" % p)
    r = subprocess.run(["sh", "-c", cmds[0]], cwd=ctx, capture_output=True, text=True,
                       timeout=1800)
    eq(r.returncode, 0, "build stage command %r:\n%s" % (cmds[0], r.stderr[-3000:]))
    check(re.match(r"adaptmon \d", r.stdout.strip().splitlines()[-1]), "version: %r" % r.stdout)
    shutil.rmtree(os.path.dirname(ctx), ignore_errors=True)


def test_dockerfile_lints():
    """dockerfilelint (npm, tests/fleet/package.json; hadolint is neither on
    npm nor in Debian bookworm) finds nothing in the Dockerfile; skipped only
    when npm cannot install it."""
    here = os.path.join(ROOT, "tests", "fleet")
    lint = os.path.join(here, "node_modules", ".bin", "dockerfilelint")
    if not os.path.exists(lint) and have("npm"):
        subprocess.run(["npm", "ci", "--prefix", here, "--no-audit", "--no-fund",
                        "--loglevel=error"], capture_output=True, timeout=600)
    if not os.path.exists(lint):
        from harness import Skip
        raise Skip("dockerfilelint missing and `npm ci --prefix tests/fleet` failed")
    r = subprocess.run([lint, "-o", "json", os.path.join(ROOT, "Dockerfile")],
                       capture_output=True, text=True)
    out = json.loads(r.stdout)
    issues = [i for f in out.get("files", []) for i in f.get("issues", [])]
    eq(issues, [], "dockerfilelint issues")


def test_systemd_unit_and_conf_agree():
    """The unit and deploy/systemd/adaptmon.conf agree: the file the unit's
    install lines put in place is the one `adaptmon serve` reads by default;
    the unit sets no ADAPTMON_* variable that would silently override the
    file; the file's database is inside the unit's StateDirectory; the stop
    timeout exceeds the file's shutdown-timeout-ms; and the server starts
    with the file (only port and database redirected by flags)."""
    unit = read("deploy", "systemd", "adaptmon.service")
    conf = read("deploy", "systemd", "adaptmon.conf")
    helptext = subprocess.run([ADAPTMON, "serve", "--help"], capture_output=True,
                              text=True).stdout
    default = re.search(r"(/etc/\S+\.conf) when it exists", helptext).group(1)
    eq(default, "/etc/adaptmon/adaptmon.conf", "the server's default config file")
    check(re.search(r"install .*deploy/systemd/adaptmon\.conf %s" % re.escape(default), unit),
          "the unit's install lines put adaptmon.conf at " + default)
    eq(re.findall(r"(?m)^Environment=(ADAPTMON_\w+=\S*)", unit),
       ["ADAPTMON_CONFIG=" + default],
       "the unit sets no ADAPTMON_* option variable (it would override the file), only "
       "ADAPTMON_CONFIG, which makes the file required")
    env_file = re.search(r"(?m)^EnvironmentFile=-?(\S+)", unit).group(1)
    eq(os.path.dirname(env_file), os.path.dirname(default), "tokens file beside the config")
    vals = dict(re.findall(r"(?m)^([a-z-]+) = (.*)$", conf))
    state = re.search(r"(?m)^StateDirectory=(\S+)", unit).group(1)
    check(vals["db"].startswith("/var/lib/%s/" % state), "db %r in StateDirectory" % vals["db"])
    stop = re.search(r"(?m)^TimeoutStopSec=(\d+)s$", unit).group(1)
    check(int(stop) * 1000 > int(vals["shutdown-timeout-ms"]),
          "TimeoutStopSec %ss > shutdown-timeout-ms %s" % (stop, vals["shutdown-timeout-ms"]))
    eq(vals.get("listen"), "127.0.0.1", "loopback by default")
    # the server accepts the file as it is
    d = tmpdir("adaptmon-conf-")
    env = {"PATH": os.environ.get("PATH", ""),
           "ADAPTMON_CONFIG": os.path.join(DEPLOY, "systemd", "adaptmon.conf")}
    p = subprocess.Popen([ADAPTMON, "serve", "--port", "0", "--db", os.path.join(d, "a.db")],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        check("adaptmon listening on http://127.0.0.1:" in line, "started: %r" % line)
    finally:
        p.send_signal(signal.SIGTERM)
        _out, err = p.communicate(timeout=30)
    eq(p.returncode, 0, "exit status")
    check("config %s" % env["ADAPTMON_CONFIG"] in err, "startup line names the file: %r" % err)


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

#!/usr/bin/env python3
"""The README's live-service examples run exactly as printed.

Takes the ```sh blocks of README.md's section "The live service", changes
only the string 127.0.0.1:8080 into the address of a spawned
`adaptmon serve` (free loopback port), runs each block with bash (curl)
and checks the numbers the README's prose states about them: "R0 a/b, R1
c/d and R0+1 e/f" after the segments, and after the glossary example the
term instances and the term exact match, with R0/R1 unchanged.

`make run` runs in a clean copy of the tracked files (no build/): it must
build and start the server with its ready line, and the server must answer
(the run's address is moved to a free port with ADAPTMON_PORT).

Every sh block of the README that runs `./adaptmon score` runs as printed
from the repository's root (with a --plot figure written to a temporary
file): every file it names is shipped, it exits 0 and prints something, and
when an output block (<!-- output --> ... <!-- end of output -->, optionally
fenced as text) follows it before the next block, it prints exactly that.

The section "For papers" runs its sh block (with the figure written to a
temporary file) and must print exactly the output shown between
<!-- output --> and <!-- end of output -->, and write exactly the committed
figure.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". Python standard library + bash + curl.
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (ADAPTMON, ROOT, Server, Skip, check, eq, free_port, no_store,  # noqa: E402
                     run_tests, sqlite_only)

S = None
ADDR = "127.0.0.1:8080"


def setup():
    global S
    S = Server()


def teardown():
    if S:
        eq(S.stop(), 0, "exit status of adaptmon serve after SIGTERM")


def section():
    """The README's live-service section: its text and its sh blocks, each
    with the prose that follows it (up to the next block)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("## The live service")
    end = text.find("\n## ", start + 1)
    sec = text[start:end if end > 0 else len(text)]
    parts = re.split(r"```sh\n(.*?)```", sec, flags=re.S)
    # parts: prose, block, prose, block, ..., prose
    blocks = parts[1::2]
    after = parts[2::2]
    return sec, list(zip(blocks, after))


def objects(out):
    """Every JSON value printed one after another (curl -s answers)."""
    dec, i, res = json.JSONDecoder(), 0, []
    while True:
        while i < len(out) and out[i].isspace():
            i += 1
        if i >= len(out):
            return res
        v, i = dec.raw_decode(out, i)
        res.append(v)


def run(block):
    check(ADDR in block, "the block talks to %s" % ADDR)
    script = block.replace(ADDR, "127.0.0.1:%d" % S.port)
    p = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                       timeout=60, cwd=S.dir)
    eq(p.returncode, 0, "bash status (stderr %r)" % p.stderr)
    return objects(p.stdout)


def recall_claim(prose):
    m = re.search(r"R0 (\d+)/(\d+), R1 (\d+)/(\d+)\s+and\s+R0\+1 (\d+)/(\d+)", prose)
    check(m, "the prose states R0, R1 and R0+1: %r" % prose[:200])
    return [int(x) for x in m.groups()]


def recall_of(totals):
    return [totals[k][f] for k in ("r0", "r1", "r01") for f in ("hits", "total")]


def test_readme_live_service_examples_as_printed():
    check(shutil.which("curl"), "curl is installed")
    sec, blocks = section()
    check(len(blocks) >= 2, "sh blocks in the live-service section: %d" % len(blocks))
    c = S.client()
    # 1: the session and the two segments, then the metrics
    out = run(blocks[0][0])
    metrics = out[-1]
    eq(metrics.get("session"), "demo", "the last answer of the first block is the metrics")
    got = recall_of(metrics["systems"]["default"])
    eq(got, recall_claim(blocks[0][1]), "R0/R1/R0+1 as the README says")
    eq(metrics["systems"]["default"]["terms"]["instances"], 0, "no terms without a glossary")
    # 2: the glossary example: term scores appear as the prose says
    out = run(blocks[1][0])
    prose = blocks[1][1]
    now = c.jget("/v1/sessions/demo/metrics")["systems"]["default"]
    check(now["terms"]["instances"] > 0, "term scores appear after the glossary example")
    m = re.search(r"(\d+) term instances", prose)
    check(m, "the prose states the term instances: %r" % prose[:300])
    eq(now["terms"]["instances"], int(m.group(1)), "term instances as the README says")
    m = re.search(r"term exact match (\d+)/(\d+)", prose)
    check(m, "the prose states the term exact match: %r" % prose[:300])
    eq([now["terms"]["exact"], now["terms"]["instances"]], [int(m.group(1)), int(m.group(2))],
       "term exact match as the README says")
    eq(recall_of(now), recall_claim(prose), "R0/R1/R0+1 after the glossary example")
    eq(out[-1].get("systems", {}).get("default"), now,
       "the glossary example's last answer shows the new totals")
    # the rest of the section's blocks run too
    for block, _ in blocks[2:]:
        run(block)
    c.close()


def test_readme_papers_example_as_printed():
    no_store("`adaptmon score` on files")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("## For papers")
    sec = text[start:text.find("\n## ", start + 1)]
    block = re.search(r"```sh\n(.*?)```", sec, flags=re.S).group(1)
    shown = re.search(r"<!-- output -->\n(.*?)<!-- end of output -->", sec, flags=re.S).group(1)
    fig = re.search(r"--plot (\S+\.svg)", block).group(1)
    check(("](%s)" % fig) in sec, "the section shows the figure it makes: %s" % fig)
    with tempfile.TemporaryDirectory() as tmp:
        out_svg = os.path.join(tmp, "figure.svg")
        check(block.startswith("./adaptmon "), "the block runs ./adaptmon")
        script = ADAPTMON + block[len("./adaptmon"):].replace(fig, out_svg)
        p = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                           timeout=120, cwd=ROOT)
        eq(p.returncode, 0, "bash status (stderr %r)" % p.stderr)
        eq(p.stdout, shown, "the README shows what the command prints")
        with open(out_svg, "rb") as f, open(os.path.join(ROOT, fig), "rb") as g:
            check(f.read() == g.read(), "the committed %s is what the command draws" % fig)


def _score_blocks():
    """Every sh block running ./adaptmon score, with the output block that
    follows it before the next sh block (None when none)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    parts = re.split(r"```sh\n(.*?)```", text, flags=re.S)
    res = []
    for block, after in zip(parts[1::2], parts[2::2]):
        if not block.startswith("./adaptmon score"):
            continue
        m = re.search(r"<!-- output -->\n(?:```text\n)?(.*?)(?:```\n)?<!-- end of output -->",
                      after, flags=re.S)
        res.append((block, m.group(1) if m else None))
    return res


def test_readme_score_examples_run_as_printed():
    no_store("`adaptmon score` on files")
    blocks = _score_blocks()
    check(len(blocks) >= 6, "the README's score examples: %d" % len(blocks))
    for block, shown in blocks:
        for tok in re.findall(r"[\w./-]*(?:data|docs)/[\w./-]+", block):
            if not tok.endswith(".svg"):
                check(os.path.isfile(os.path.join(ROOT, tok)), "%s is shipped" % tok)
        with tempfile.TemporaryDirectory() as tmp:
            script = ADAPTMON + block[len("./adaptmon"):]
            script = re.sub(r"--plot \S+\.svg", "--plot " + os.path.join(tmp, "f.svg"), script)
            p = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                               timeout=300, cwd=ROOT)
        eq(p.returncode, 0, "status of %r (stderr %r)" % (block, p.stderr[-500:]))
        check(p.stdout.strip() != "", "%r prints the results" % block)
        if shown is not None:
            eq(p.stdout, shown, "the README shows what %r prints" % block)


def _clean_copy(dest):
    """The files git tracks, as they are in the working tree, under dest."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = os.path.join(ROOT, name)
        if not os.path.isfile(src):
            continue  # deleted in the working tree
        os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, name))


def test_make_run_from_a_clean_checkout():
    """README: `make run  # installs missing Debian packages, builds, starts the server`.
    The build is a second make after deps (a make that skipped pkg-config for
    run built without the packages' flags, so a clean checkout failed)."""
    if os.environ.get("VALGRIND") == "1":
        raise Skip("a build of the same sources; the server is not under valgrind here")
    sqlite_only("make run serves the SQLite file ./var/adaptmon.db")
    # .git is a file in a `git worktree` checkout: exists, not isdir
    if not shutil.which("git") or not os.path.exists(os.path.join(ROOT, ".git")):
        raise Skip("not a git checkout")
    with tempfile.TemporaryDirectory(prefix="adaptmon-make-run-") as tmp:
        _clean_copy(tmp)
        port = free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("ADAPTMON_") and k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        env.update(ADAPTMON_PORT=str(port), MAKEFLAGS="-j2")
        log = open(os.path.join(tmp, "make-run.log"), "wb")
        p = subprocess.Popen(["make", "run"], cwd=tmp, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        log.close()
        try:
            line, deadline = None, time.monotonic() + 1200
            while time.monotonic() < deadline and p.poll() is None and line is None:
                time.sleep(0.5)
                with open(os.path.join(tmp, "make-run.log"), encoding="utf-8",
                          errors="replace") as f:
                    line = next((x for x in f if x.startswith("adaptmon listening on")), None)
            with open(os.path.join(tmp, "make-run.log"), encoding="utf-8", errors="replace") as f:
                tail = f.read()[-3000:]
            check(line is not None, "make run printed the ready line; its output ends:\n" + tail)
            check(("http://127.0.0.1:%d (database ./var/adaptmon.db)" % port) in line,
                  "the ready line: %r" % line)
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/healthz")
            eq(c.getresponse().status, 200, "GET /healthz of the server make run started")
            c.close()
            check(os.path.isfile(os.path.join(tmp, "var", "adaptmon.db")),
                  "the database is ./var/adaptmon.db")
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))

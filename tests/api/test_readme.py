#!/usr/bin/env python3
"""The README's live-service examples run exactly as printed.

Takes the ```sh blocks of README.md's section "The live service", changes
only the string 127.0.0.1:8080 into the address of a spawned
`adaptmon serve` (free loopback port), runs each block with bash (curl)
and checks the numbers the README's prose states about them: "R0 a/b, R1
c/d and R0+1 e/f" after the segments, and after the glossary example the
term instances and the term exact match, with R0/R1 unchanged.

The section "For papers" runs its sh block (with the figure written to a
temporary file) and must print exactly the output shown between
<!-- output --> and <!-- end of output -->, and write exactly the committed
figure.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". Python standard library + bash + curl.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ADAPTMON, ROOT, Server, check, eq, run_tests  # noqa: E402

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


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))

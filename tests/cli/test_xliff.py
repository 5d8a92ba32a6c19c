#!/usr/bin/env python3
"""adaptmon score --xliff: every CAT-tool file of tests/data/xliff scores
exactly like the same confirmed segments given as plain-text files; two
files are two sessions; a TMX --background equals its count list; hostile
XML exits 1 with a message. Ends with "N passed, N failed"."""
import json
import os
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
A = os.environ.get("ADAPTMON", os.path.join(ROOT, "adaptmon"))
X = os.path.join(ROOT, "tests", "data", "xliff")
FILES = ["trados.sdlxliff", "memoq.mqxliff", "phrase.mxliff", "phrase-2.xlf", "omegat.xlf"]


def score(*args):
    r = subprocess.run([A, "score", "--json"] + list(args), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def plain_files(d):
    with open(os.path.join(X, "expected.json"), encoding="utf-8") as f:
        e = json.load(f)
    S = e["segments"]

    def w(name, lines):
        p = os.path.join(d, name)
        with open(p, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return p
    # the XLIFF files declare en -> fr, which score takes (issue 24)
    args = ["--source-lang", "en", "--target-lang", "fr",
            "--ref", w("ref", [s["translation"] for s in S]),
            "--src", w("src", [s["source"] for s in S])]
    for k in e["systems"]:
        args += ["--hyp", "%s=%s" % (k, w(k, [s["hypotheses"][k] for s in S]))]
    return args, len(S)


def test_xliff_equals_plain():
    with tempfile.TemporaryDirectory() as d:
        args, n = plain_files(d)
        base = score(*args)
        for f in FILES:
            got = score("--xliff", os.path.join(X, f))
            assert got["segments"] == n, (f, got["segments"])
            assert got["systems"] == base["systems"], f


def test_two_files_two_sessions():
    got = score("--xliff", os.path.join(X, FILES[0]), "--xliff", os.path.join(X, FILES[1]))
    assert got["sessions"] == 2, got["sessions"]


def test_tmx_background():
    with tempfile.TemporaryDirectory() as d:
        tmx = os.path.join(d, "m.tmx")
        with open(tmx, "w") as f:
            f.write("<tmx version='1.4'><header srclang='en'/><body><tu>"
                    "<tuv xml:lang='en'><seg>x</seg></tuv>"
                    "<tuv xml:lang='fr'><seg>et vous symptômes symptômes</seg></tuv>"
                    "</tu></body></tmx>")
        cnt = os.path.join(d, "c.txt")
        with open(cnt, "w") as f:
            f.write("1 et\n1 vous\n2 symptômes\n")
        x = os.path.join(X, "omegat.xlf")
        a = score("--xliff", x, "--background", tmx, "--rare-threshold", "1")
        b = score("--xliff", x, "--background", cnt, "--rare-threshold", "1")
        c = score("--xliff", x)
        assert a["systems"] == b["systems"]
        assert a["systems"] != c["systems"]


def test_hostile_exits_1():
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "bl.xlf")
        with open(p, "w") as f:
            f.write("<!DOCTYPE x [<!ENTITY a 'aa'><!ENTITY b '&a;&a;'>]><xliff version='1.2'>"
                    "<file><body><trans-unit id='1'><source>&b;</source></trans-unit>"
                    "</body></file></xliff>")
        r = subprocess.run([A, "score", "--xliff", p], capture_output=True, text=True)
        assert r.returncode == 1 and "entity" in r.stderr, (r.returncode, r.stderr)
        r = subprocess.run([A, "score", "--xliff", p, "--ref", p], capture_output=True, text=True)
        assert r.returncode == 2, r.returncode


if __name__ == "__main__":
    ok = bad = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print("ok     " + name)
                ok += 1
            except Exception:
                print("FAILED " + name)
                traceback.print_exc()
                bad += 1
    print("%d passed, %d failed" % (ok, bad))
    sys.exit(1 if bad else 0)

#!/usr/bin/env python3
"""Black-box tests of `adaptmon score --paired-bs / --paired-ar`.

The golden numbers (data/golden/significance.json) are sacreBLEU 2.6.0's
paired bootstrap and approximate randomization on the TICO-19 dev set:
the Fairseq baseline against the three simulated systems in
data/tico19-enfr-dev/systems/. Every number must be equal, not close.
Standard library only; ends with the line "N passed, N failed".
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADAPTMON = os.environ.get("ADAPTMON", os.path.join(ROOT, "adaptmon"))
if not os.path.isabs(ADAPTMON):
    ADAPTMON = os.path.join(ROOT, ADAPTMON)
DATA = os.path.join(ROOT, "data")
DEV = os.path.join(DATA, "tico19-enfr-dev")
SYS = os.path.join(DEV, "systems")
REF_SGM = os.path.join(DEV, "dev.en-fr.fr.sgm")
HYP_SGM = os.path.join(DEV, "en-fr.dev.txt.truecased.sgm")
with open(os.path.join(DATA, "golden", "significance.json"), encoding="utf-8") as f:
    GOLD = json.load(f)
TMP = tempfile.mkdtemp(prefix="adaptmon-signif-")
NAMES = ["baseline.fr", "adaptive.fr", "adaptive-weak.fr", "adaptive-tiny.fr"]


def sgm_text(path):
    """Segment texts in file order: tags removed, entities decoded,
    whitespace collapsed (data/README.md)."""
    with open(path, encoding="utf-8") as f:
        t = f.read()
    out = []
    for d in re.finditer(r'<doc [^>]*>(.*?)</doc>', t, re.S):
        for s in re.finditer(r'<seg id="[^"]+">(.*?)</seg>', d.group(1), re.S):
            out.append(" ".join(html.unescape(re.sub(r"<[^>]+>", "", s.group(1))).split()))
    return out


def write(name, lines):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


REF = write("ref.fr", sgm_text(REF_SGM))
BASE = write("baseline.fr", sgm_text(HYP_SGM))
HYPS = ["--hyp", "baseline.fr=" + BASE]
for n in NAMES[1:]:
    HYPS += ["--hyp", "%s=%s" % (n, os.path.join(SYS, n))]
# sacreBLEU reads the text as is: no tag stripping
INPUT = ["--no-strip-tags", "--ref", REF] + HYPS


def run(*args, check=True):
    p = subprocess.run([ADAPTMON, "score", *args], capture_output=True, timeout=300)
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if check and p.returncode != 0:
        raise AssertionError("exit %d: %s" % (p.returncode, err))
    return p.returncode, out, err


def sig(*args):
    return json.loads(run(*args, "--json")[1])["significance"]


def eq(a, b, what):
    if a != b:
        raise AssertionError("%s: got %r, expected %r" % (what, a, b))


def check_golden(key, got):
    eq([r["system"] for r in got["systems"]], NAMES, "systems")
    for gold, row in zip(GOLD[key], got["systems"]):
        for metric in ("BLEU", "chrF2", "TER"):
            for field in ("score", "p_value", "mean", "ci"):
                eq(row[metric].get(field), gold[metric][field],
                   "%s %s %s %s" % (key, row["system"], metric, field))


def test_paired_bs_equals_sacrebleu():
    s = sig(*INPUT, "--paired-bs")
    check_golden("paired_bs", s)
    eq((s["test"], s["n"], s["seed"], s["baseline"]), ("paired-bs", 1000, 12345, "baseline.fr"),
       "header")
    eq(s["systems"][0]["baseline"], True, "baseline flag")


def test_paired_ar_equals_sacrebleu():
    check_golden("paired_ar", sig(*INPUT, "--paired-ar"))


def test_recall_and_ter_intervals():
    s = sig(*INPUT, "--paired-bs", "--n-bootstrap", "200")
    eq(s["n"], 200, "n")
    for metric in ("R0", "R1", "R0+1", "1-TERm", "chrF2++"):
        eq(s["resampling"][metric], "segments", "one session: segments for " + metric)
        for row in s["systems"]:
            m = row[metric]
            if not (m["lo"] <= m["mean"] <= m["hi"] and m["ci"] > 0):
                raise AssertionError("%s %s: bad interval %r" % (row["system"], metric, m))
    # adaptive.fr learns the confirmed words: R1 clearly above the baseline's
    base, adaptive = s["systems"][0]["R1"], s["systems"][1]["R1"]
    if not adaptive["lo"] > base["hi"] or not adaptive["p_value"] < 0.01:
        raise AssertionError("R1: baseline %r vs adaptive %r" % (base, adaptive))
    eq(base["p_value"], None, "baseline p")


def test_sessions_are_resampled_as_blocks():
    s = sig("--no-strip-tags", "--by-doc", "--sgm-ref", REF_SGM, "--sgm-hyp", "Fairseq=" + HYP_SGM,
            "--sgm-hyp", "Same=" + HYP_SGM, "--paired-bs", "--n-bootstrap", "100")
    eq(s["sessions"], 13, "sessions")
    for metric in ("R0", "R1", "R0+1"):
        eq(s["resampling"][metric], "sessions", metric)
    for metric in ("BLEU", "TER", "1-TERm"):
        eq(s["resampling"][metric], "segments", metric)
    # the same output twice: identical intervals, and sacreBLEU's p for Δ = 0
    a, b = s["systems"]
    eq(a["R1"]["ci"], b["R1"]["ci"], "same system, same interval")
    eq(b["R1"]["p_value"], 1 / 101, "p of an identical system")


def test_baseline_seed_and_errors():
    s = sig(*INPUT, "--paired-bs", "--n-bootstrap", "50", "--baseline", "adaptive.fr")
    eq([r["p_value"] is None for r in (x["BLEU"] for x in s["systems"])],
       [False, True, False, False], "p null only for the chosen baseline")
    other = sig(*INPUT, "--paired-bs", "--n-bootstrap", "50", "--seed", "7")
    if other["systems"][0]["BLEU"]["mean"] == s["systems"][0]["BLEU"]["mean"]:
        raise AssertionError("--seed does not change the resamples")
    for args, status, msg in ((["--baseline", "nope"], 1, "not a system name"),
                              (["--n-bootstrap", "0"], 2, "--n-bootstrap"),
                              (["--seed", "-1"], 2, "--seed"),
                              (["--ci", "1.5"], 2, "--ci")):
        rc, _, err = run(*INPUT, "--paired-bs", *args, check=False)
        eq(rc, status, "exit status of %r" % args)
        if msg not in err:
            raise AssertionError("%r: message %r lacks %r" % (args, err, msg))


def test_exposures_histogram():
    """Hand-computed: A misses `terrier` at shots 0 and 1 and produces it at
    shot 2; produces bites, eats, sleeps at first sight; never `woman`."""
    ref = write("x-ref.txt", ["terrier bites woman", "terrier eats", "terrier sleeps"])
    a = write("x-a.txt", ["dog bites lady", "dog eats", "terrier sleeps"])
    d = json.loads(run("--ref", ref, "--hyp", "A=" + a, "--hyp", "Same=" + ref, "--exposures",
                       "--json")[1])["exposures"]
    eq(d["A"], {"histogram": [3, 0, 1], "never": 1, "known": 3, "learned": 1,
                "median_exposures_to_learn": 2.0}, "A")
    eq(d["Same"], {"histogram": [5], "never": 0, "known": 5, "learned": 0,
                   "median_exposures_to_learn": None}, "Same")
    # R_k for k = 0..3 in one run
    tot = json.loads(run("--ref", ref, "--hyp", "A=" + a, "--k-max", "3", "--json")[1])
    eq(tot["systems"]["A"]["r2"], {"hits": 1, "total": 1, "score": 1.0}, "R2")


def test_same_results_on_every_scoring_path():
    """Threaded scoring, --per-segment (one thread, in order) and one core
    collect the same statistics: identical answers."""
    args = [*INPUT, "--paired-bs", "--n-bootstrap", "100", "--exposures", "--json"]
    outs = []
    for prefix, extra in (([], []), ([], ["--per-segment"]), (["taskset", "-c", "0"], [])):
        if prefix and not shutil.which(prefix[0]):
            continue
        p = subprocess.run([*prefix, ADAPTMON, "score", *args, *extra], capture_output=True,
                           timeout=300, check=True)
        d = json.loads(p.stdout)
        outs.append((d["significance"], d["exposures"]))
    for o in outs[1:]:
        eq(o, outs[0], "same significance and exposures")


def test_table_output_and_help():
    _, out, _ = run(*INPUT, "--paired-bs", "--n-bootstrap", "20")
    if "paired bootstrap resampling, baseline baseline.fr" not in out or "R1" not in out:
        raise AssertionError(out[-2000:])
    _, out, _ = run("--help")
    for opt in ("--paired-bs", "--paired-ar", "--baseline", "--n-bootstrap", "--seed", "--k-max"):
        if opt not in out:
            raise AssertionError("--help lacks " + opt)


def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
            print("ok     " + name)
            passed += 1
        except Exception:
            print("FAILED " + name)
            traceback.print_exc(file=sys.stdout)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

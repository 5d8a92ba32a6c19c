#!/usr/bin/env python3
"""Black-box tests of `adaptmon score --paired-bs / --paired-ar`.

The golden numbers (data/golden/significance.json) are sacreBLEU 2.6.0's
paired bootstrap and approximate randomization on the TICO-19 dev set:
the Fairseq baseline against the three simulated systems in
data/tico19-enfr-dev/systems/. Every number must be equal, not close.
Standard library only; ends with the line "N passed, N failed".
"""
import csv
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from harness import ADAPTMON, DATA, DEV, ROOT, run_tests  # noqa: E402,F401
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
    # the table is the compact layout for papers (issue 29): one cell per
    # metric, the resampling unit once as a note
    for want in ("test: paired-bs", "baseline: baseline.fr", "resamples: 20",
                 "R1 (μ ± 95% CI)", "resampling: segments", " ± ", "(p = 0.0476)*"):
        if want not in out:
            raise AssertionError("table lacks %r:\n%s" % (want, out[-2000:]))
    _, out, _ = run("--help")
    for opt in ("--paired-bs", "--paired-ar", "--baseline", "--n-bootstrap", "--seed", "--k-max"):
        if opt not in out:
            raise AssertionError("--help lacks " + opt)


# significance metric name -> the report's column key (cli/cli_report.c)
KEYS = {"BLEU": "bleu", "chrF2": "chrf2", "chrF2++": "chrf2pp", "TER": "ter", "R0": "r0",
        "R1": "r1", "R0+1": "r01", "1-TERm": "one_minus_term"}


def csv_rows(out, delim):
    rows = list(csv.DictReader(io.StringIO(out), delimiter=delim))
    return {r["system"]: r for r in rows if r.get("doc") in (None, "all")}


def num(field):
    return None if field == "" else float(field)


def check_columns(s, rows):
    """rows (system -> {column: text}) carry the significance s exactly:
    Δ = score - baseline score, [lo, hi], p, resampling."""
    base = next(r for r in s["systems"] if r["baseline"])
    eq(sorted(rows), sorted(r["system"] for r in s["systems"]), "systems with columns")
    for row in s["systems"]:
        got = rows[row["system"]]
        for metric, key in KEYS.items():
            m, what = row[metric], "%s %s" % (row["system"], metric)
            eq(got[key + "_resampling"], s["resampling"][metric], what + " resampling")
            eq(num(got[key + "_p"]), m["p_value"], what + " p")
            delta = None if row is base else m["score"] - base[metric]["score"]
            eq(num(got[key + "_delta"]), delta, what + " delta")
            if s["test"] == "paired-bs":
                eq((num(got[key + "_ci_lo"]), num(got[key + "_ci_hi"])), (m["lo"], m["hi"]),
                   what + " interval")
            elif key + "_ci_lo" in got:
                raise AssertionError("paired-ar has no interval columns")


def test_every_format_carries_the_significance():
    """--format csv/tsv hold Δ, [lo, hi], p and the resampling of every
    metric, equal to --json's significance to the last bit; markdown the
    same numbers rounded; --by-doc puts them on the aggregate rows."""
    for extra in ([*INPUT, "--paired-bs", "--n-bootstrap", "50"],
                  [*INPUT, "--paired-ar", "--n-bootstrap", "50"],
                  ["--no-strip-tags", "--by-doc", "--sgm-ref", REF_SGM, "--sgm-hyp",
                   "Fairseq=" + HYP_SGM, "--sgm-hyp", "adaptive=" + HYP_SGM, "--paired-bs",
                   "--n-bootstrap", "30"]):
        s = sig(*extra)
        check_columns(s, csv_rows(run(*extra, "--format", "csv")[1], ","))
        check_columns(s, csv_rows(run(*extra, "--format", "tsv")[1], "\t"))
    if s["resampling"]["R1"] != "sessions":
        raise AssertionError("--by-doc: R1 resampled by %r" % s["resampling"]["R1"])
    extra = [*INPUT, "--paired-bs", "--n-bootstrap", "50"]
    s = sig(*extra)
    md = run(*extra, "--format", "markdown", "--precision", "3")[1]
    lines = [l for l in md.splitlines() if l.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    for line in lines[2:]:
        cells = dict(zip(head, (c.strip() for c in line.strip("|").split("|"))))
        row = next(r for r in s["systems"] if r["system"] == cells["system"])
        m = row["R1"]
        # compact cells (issue 29), in place of the score's column: the
        # score (mean ± half-width) at --precision, the
        # p-value with 4 decimals (its own rule), '*' below 0.05, '†' for
        # Δ 0 at p = 1/(n+1)
        want = "%.3f (%.3f ± %.3f)" % (m["score"], m["mean"], m["ci"])
        if m["p_value"] is not None:
            delta = m["score"] - next(r for r in s["systems"] if r["baseline"])["R1"]["score"]
            mark = "†" if delta == 0 and abs(m["p_value"] - 1 / 51) < 1e-12 else \
                "*" if m["p_value"] < 0.05 else ""
            want += " (p = %.4f)%s" % (m["p_value"], mark)
        eq(cells["R1 (μ ± 95% CI)"], want, "markdown R1 cell")
    eq(len(lines), 2 + len(NAMES), "markdown rows")
    if "- `resampling: segments`" not in md:
        raise AssertionError("markdown: no resampling note")
    tex = run(*extra, "--format", "latex")[1]
    body = "\n".join(l for l in tex.splitlines() if not l.startswith("%"))  # notes: comments
    if "R1 ($\\mu$ $\\pm$ 95\\% CI)" not in body or any(c in body for c in "Δμ±†"):
        raise AssertionError("LaTeX: μ, ± not written as $\\mu$, $\\pm$:\n" + tex[-1500:])


def test_exposures_columns():
    extra = [*INPUT, "--exposures"]
    ex = json.loads(run(*extra, "--json")[1])["exposures"]
    rows = csv_rows(run(*extra, "--format", "csv")[1], ",")
    for name, e in ex.items():
        got = rows[name]
        eq([int(got["exp_" + k]) for k in ("known", "learned", "never")],
           [e["known"], e["learned"], e["never"]], name + " counts")
        eq(num(got["exp_median"]), e["median_exposures_to_learn"], name + " median")
        eq([int(x) for x in got["exp_histogram"].split()], e["histogram"], name + " histogram")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))

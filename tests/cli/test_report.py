#!/usr/bin/env python3
"""Black-box tests of the output of `adaptmon score` for papers: --format
table|json|csv|tsv|markdown|latex at one --precision, system names from the
SGML sysid and file names, --by-doc rows, the sacreBLEU signatures,
per-segment rows with running totals, and the --plot SVG figure.

Every number is checked against the --json output of the same run (which the
golden tests of test_score.py pin down). Python standard library only; ends
with the line "N passed, N failed".
"""
import atexit
import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from harness import ADAPTMON, DATA, DEV, ROOT, run_tests  # noqa: E402,F401
SRC = os.path.join(DEV, "dev.en-fr.en.sgm")
REF = os.path.join(DEV, "dev.en-fr.fr.sgm")
HYP = os.path.join(DEV, "en-fr.dev.txt.truecased.sgm")
GLOSSARY = os.path.join(ROOT, "data", "glossaries", "tico19", "f_en-fr_XX.csv")
TMP = tempfile.mkdtemp(prefix="adaptmon-report-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
SVG = "{http://www.w3.org/2000/svg}"
# the TICO-19 dev set with its glossary; the sysid of HYP is "Fairseq"
TICO = ["--source-lang", "en", "--target-lang", "fr", "--sgm-src", SRC, "--sgm-ref", REF,
        "--glossary", GLOSSARY]


def run(*args, check=True):
    p = subprocess.run([ADAPTMON, "score", *args], capture_output=True, timeout=300)
    out, err = p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")
    if check and p.returncode != 0:
        raise AssertionError("exit %d: %s" % (p.returncode, err))
    return p.returncode, out, err


def out_of(*args):
    return run(*args)[1]


def eq(a, b, what):
    if a != b:
        raise AssertionError("%s: got %r, expected %r" % (what, a, b))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def rows_of(text, delim=","):
    return list(csv.DictReader(io.StringIO(text), delimiter=delim))


def num(s):
    return None if s == "" else float(s)


def score(o):
    return o["score"] if isinstance(o, dict) else o


# ---- formats ------------------------------------------------------------------

def test_csv_tsv_full_precision_equal_json():
    args = TICO + ["--sgm-hyp", HYP]
    j = json.loads(out_of(*args, "--json"))["systems"]["Fairseq"]
    for fmt, delim in (("csv", ","), ("tsv", "\t")):
        rows = rows_of(out_of(*args, "--format", fmt), delim)
        eq(len(rows), 1, "%s: one row per system" % fmt)
        r = rows[0]
        eq(r["system"], "Fairseq", "system name from sysid=\"Fairseq\"")
        eq(int(r["segments"]), j["segments"], "segments")
        for key in ("r0", "r1", "r01"):
            eq(num(r[key]), j[key]["score"], "%s %s at full precision" % (fmt, key))
            eq([int(r[key + "_hits"]), int(r[key + "_total"])], [j[key]["hits"], j[key]["total"]],
               "%s %s counts" % (fmt, key))
        eq(num(r["bleu"]), j["bleu"], "BLEU")
        eq(num(r["chrf2"]), j["chrf"], "chrF2")
        eq(num(r["chrf2pp"]), j["chrfpp"], "chrF2++")
        eq(num(r["ter"]), j["ter"], "TER (x100 as sacreBLEU prints it)")
        eq(num(r["one_minus_term"]), j["one_minus_term"], "1-TERm")
        eq(num(r["term_em"]), j["terms"]["exact_match"], "term EM")
        eq(num(r["wo2"]), j["terms"]["window_overlap"]["2"]["score"], "WO2")


def decimals_in(text):
    """Decimal counts of every number with a fraction in text."""
    return {len(m) for m in re.findall(r"(?<![\w.])-?\d+\.(\d+)(?![\w.])", text)}


def test_tables_one_precision():
    args = TICO + ["--sgm-hyp", HYP]
    j = json.loads(out_of(*args, "--json"))["systems"]["Fairseq"]
    for fmt in ("table", "markdown", "latex"):
        for p in (2, 4):
            out = out_of(*args, "--format", fmt, "--precision", str(p))
            body = "\n".join(l for l in out.splitlines()
                             if "|" not in l or not re.search(r"\w+:\S", l))  # not the signatures
            body = "\n".join(l for l in body.splitlines()
                             if not l.startswith(("%", "- `", "signature", "sacrebleu", "version")))
            eq(decimals_in(body), {p}, "%s --precision %d: every number has %d decimals"
               % (fmt, p, p))
            check(("%.*f" % (p, j["bleu"])) in out, "%s shows BLEU %.*f" % (fmt, p, j["bleu"]))
    md = out_of(*args, "--format", "markdown").splitlines()
    check(md[0].startswith("| system |") and md[1].startswith("| --- |"), "a pipe table: %r" % md[:2])
    tex = out_of(*args, "--format", "latex")
    check("\\begin{tabular}{l" in tex and "\\toprule" in tex and "\\bottomrule" in tex,
          "a booktabs tabular")


def test_alam2021_table_one_precision():
    # the old table mixed %.4f (term EM) with %.17g (WO, 1-TERm)
    out = out_of("--profile", "alam2021", "--sgm-src", SRC, "--sgm-ref", REF, "--sgm-hyp", HYP)
    body = "\n".join(l for l in out.splitlines() if not l.startswith("signature"))
    eq(decimals_in(body), {4}, "alam2021 table: every number with 4 decimals:\n" + body)
    check(body.splitlines()[-1].startswith("Fairseq "), "named by the sysid")


def test_latex_and_csv_escape_names():
    ref = write("esc.ref", "le chat\n")
    hyp = write("esc.hyp", "le chat\n")
    tex = out_of("--ref", ref, "--hyp", "a_b&c%=" + hyp, "--format", "latex")
    check("a\\_b\\&c\\%" in tex, "LaTeX specials escaped: %r" % tex)
    rows = rows_of(out_of("--ref", ref, "--hyp", 'x,"y"=' + hyp, "--format", "csv"))
    eq(rows[0]["system"], 'x,"y"', "CSV quoting round-trips")


def test_json_format_is_json_flag():
    args = ["--sgm-ref", REF, "--sgm-hyp", HYP]
    eq(json.loads(out_of(*args, "--format", "json")), json.loads(out_of(*args, "--json")),
       "--format json equals --json")


def test_bad_output_options_are_usage_errors():
    for args, needle in ((["--format", "xml"], "--format must be"),
                         (["--precision", "18"], "--precision must be"),
                         (["--precision", "x"], "--precision must be"),
                         (["--plot-window", "-1"], "--plot-window must be")):
        rc, out, err = run("--sgm-ref", REF, "--sgm-hyp", HYP, *args, check=False)
        eq(rc, 2, "exit status of %r" % args)
        check(needle in err, "%r: %r" % (args, err))
        eq(out, "", "no output after a usage error")


def test_empty_input_keeps_the_header_and_bad_plot_paths_fail():
    empty = write("empty.txt", "")
    rows = out_of("--ref", empty, "--hyp", "e=" + empty, "--format", "csv", "--per-segment")
    eq(rows.splitlines()[0].split(",")[:7], ["seq", "id", "doc", "system", "r0", "r0_hits",
                                             "r0_total"], "the header without segments")
    eq(len(rows.splitlines()), 1, "no rows")
    rc, out, err = run("--sgm-ref", REF, "--sgm-hyp", HYP, "--plot",
                       os.path.join(TMP, "no", "such", "dir.svg"), check=False)
    eq(rc, 1, "an unwritable figure is an error")
    check("cannot write" in err, err)
    eq(out, "", "and nothing is printed")
    check(not os.path.exists(os.path.join(TMP, "no")), "nothing created")
    rc, _, err = run("--profile", "alam2021", "--sgm-ref", REF, "--sgm-hyp", HYP, "--plot",
                     os.path.join(TMP, "a.svg"), check=False)
    eq(rc, 2, "alam2021 has no curve")
    check("--plot needs" in err, err)


# ---- names ----------------------------------------------------------------------

def test_system_names_from_sysid_and_file_names():
    out = out_of("--sgm-ref", REF, "--sgm-hyp", HYP, "--format", "csv")
    eq([r["system"] for r in rows_of(out)], ["Fairseq"], "SGML: the sysid")
    out = out_of("--sgm-ref", REF, "--sgm-hyp", "mine=" + HYP, "--format", "csv")
    eq([r["system"] for r in rows_of(out)], ["mine"], "NAME= wins")
    ref = write("n.ref", "a b\n")
    base = write("baseline.fr.txt", "a b\n")
    os.makedirs(os.path.join(TMP, "other"), exist_ok=True)
    same = os.path.join(TMP, "other", "baseline.fr.txt")
    with open(same, "w") as f:
        f.write("a\n")
    out = out_of("--ref", ref, "--hyp", base, "--hyp", same, "--format", "csv")
    eq([r["system"] for r in rows_of(out)], ["baseline", "hyp2"],
       "plain text: the file name without extension; a taken name becomes hyp<N>")


# ---- signatures ---------------------------------------------------------------

def test_sacrebleu_signatures_follow_the_options():
    want = {
        "bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
        "chrf": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0",
        "chrf++": "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0",
        "ter": "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0",
    }
    args = ["--sgm-ref", REF, "--sgm-hyp", HYP]
    eq(json.loads(out_of(*args, "--json"))["sacrebleu"], want, "JSON signatures")
    table = out_of(*args)
    for k, v in want.items():
        check(("sacrebleu-%s: %s" % (k, v)) in table, "table shows the %s signature" % k)
    check("signature: adaptmon:1|" in table, "and adaptmon's own")
    check("sacrebleu-bleu: " + want["bleu"] in out_of(*args, "--format", "markdown"), "markdown")
    check("% sacrebleu-ter: " + want["ter"] in out_of(*args, "--format", "latex"), "latex")
    cs = json.loads(out_of(*args, "--ter-case-sensitive", "--json"))["sacrebleu"]["ter"]
    eq(cs, want["ter"].replace("case:lc", "case:mixed"), "TER case follows --ter-case-sensitive")


# ---- --by-doc ---------------------------------------------------------------------

def sgml_docids(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r'<doc [^>]*docid="([^"]+)"', f.read())


def test_by_doc_rows_and_aggregate():
    args = TICO + ["--sgm-hyp", HYP, "--by-doc"]
    j = json.loads(out_of(*args, "--json"))
    rows = rows_of(out_of(*args, "--format", "csv"))
    docs = sgml_docids(REF)
    eq([r["doc"] for r in rows], docs + ["all"], "a row per document in order, then the aggregate")
    eq(sum(int(r["segments"]) for r in rows[:-1]), int(rows[-1]["segments"]), "segments add up")
    eq([d["doc"] for d in j["documents"]], docs, "JSON documents")
    for r, d in zip(rows, j["documents"]):
        t = d["systems"]["Fairseq"]
        eq([int(r["r0_hits"]), int(r["r0_total"])], [t["r0"]["hits"], t["r0"]["total"]],
           "R0 of " + r["doc"])
        eq(num(r["bleu"]), t["bleu"], "BLEU of " + r["doc"])
    t = j["systems"]["Fairseq"]
    eq([int(rows[-1]["r0_hits"]), int(rows[-1]["r0_total"])], [t["r0"]["hits"], t["r0"]["total"]],
       "the aggregate row")
    eq(sum(int(r["r0_hits"]) for r in rows[:-1]), t["r0"]["hits"], "R0 hits add up over documents")
    md = out_of(*args, "--format", "markdown")
    check("| Fairseq | CMU_1 |" in md and "| Fairseq | all |" in md, "markdown rows per document")


# ---- per segment ----------------------------------------------------------------

def test_per_segment_rows_carry_the_running_totals():
    args = TICO + ["--sgm-hyp", HYP, "--sgm-hyp", "copy=" + REF]
    j = json.loads(out_of(*args, "--per-segment", "--json"))
    rows = rows_of(out_of(*args, "--per-segment", "--format", "csv"))
    eq(len(rows), 2 * j["segments"], "a row per segment and system")
    ids = re.findall(r'<seg id="([^"]+)"', open(REF, encoding="utf-8").read())
    eq([r["id"] for r in rows[::2]], ids, "segment ids from the input")
    eq(rows[0]["doc"], "CMU_1", "document ids from the input")
    for name in ("Fairseq", "copy"):
        mine = [r for r in rows if r["system"] == name]
        eq([int(r["seq"]) for r in mine], list(range(1, len(mine) + 1)), "seq")
        hits = total = 0
        for r, js in zip(mine, j["per_segment"]):
            hits += int(r["r0_hits"])
            total += int(r["r0_total"])
            want = hits / total if total else None
            got = num(r["run_r0"])
            check(want is None and got is None or abs(got - want) < 1e-15,
                  "running R0 after %s: %r vs %r" % (r["id"], got, want))
            eq(got, js["running"][name]["r0"], "JSON running R0 after " + r["id"])
        t = j["systems"][name]
        last = mine[-1]
        eq(num(last["run_r0"]), t["r0"]["score"], "the last running R0 is the total")
        eq(num(last["run_r01"]), t["r01"]["score"], "the last running R0+1 is the total")
        eq(num(last["run_term_em"]), t["terms"]["exact_match"], "the last running term EM")
        eq(num(last["run_bleu"]), t["bleu"], "the last running BLEU")
        eq(num(last["run_one_minus_term"]), t["one_minus_term"], "the last running 1-TERm")
    # tables print the segments, then the totals
    md = out_of(*args, "--per-segment", "--format", "markdown")
    eq(md.count("| seq |"), 1, "one per-segment table")
    eq(sum(1 for l in md.splitlines() if l.startswith("| system |")), 1, "one totals table")


# ---- the figure -----------------------------------------------------------------

def series_of(path):
    root = ET.parse(path).getroot()
    eq(root.tag, SVG + "svg", "an SVG document")
    out = {}
    for g in root.iter(SVG + "g"):
        if g.get("class") == "series":
            ys = [None if v == "null" else float(v) for v in g.get("data-y").split()]
            band = g.find(SVG + "polygon")
            lo = hi = None
            if band is not None:
                lo = [None if v == "null" else float(v) for v in band.get("data-lo").split()]
                hi = [None if v == "null" else float(v) for v in band.get("data-hi").split()]
            out[(g.get("data-system"), g.get("data-metric"))] = (
                [float(x) for x in g.get("data-x").split()], ys, lo, hi)
    return root, out


def test_plot_series_equal_the_running_totals():
    svg = os.path.join(TMP, "curves.svg")
    args = TICO + ["--sgm-hyp", HYP, "--sgm-hyp", "copy=" + REF]
    rows = rows_of(out_of(*args, "--per-segment", "--format", "csv", "--plot", svg,
                          "--plot-points", "5000"))
    root, series = series_of(svg)
    keys = ("r0", "r1", "r01", "term_exact_match", "window_overlap", "one_minus_term")
    eq(sorted(series), sorted((s, k) for s in ("Fairseq", "copy") for k in keys),
       "one series per system and metric")
    for name in ("Fairseq", "copy"):
        mine = [r for r in rows if r["system"] == name]
        xs, ys, lo, hi = series[(name, "r0")]
        eq(xs, [float(i) for i in range(1, len(mine) + 1)], "x: every segment")
        eq(ys, [num(r["run_r0"]) for r in mine], "R0 points are the running R0")
        eq(series[(name, "r01")][1], [num(r["run_r01"]) for r in mine], "R0+1 points")
        eq(lo, None, "no band unless asked")
    check(root.find(SVG + "title") is not None, "a title")
    text = open(svg, encoding="utf-8").read()
    for bad in ("<script", "href=", "@import", "url("):
        check(bad not in text, "self-contained: no %s" % bad)
    # downsampled: first and last kept
    out_of(*args, "--plot", svg, "--plot-points", "10")
    _, small = series_of(svg)
    xs, ys, _, _ = small[("Fairseq", "r0")]
    eq(len(xs), 10, "10 points")
    eq((xs[0], xs[-1]), (1.0, 971.0), "first and last segment kept")


def test_plot_styles_distinct_for_many_systems():
    ref = write("m.ref", "a b c\nd e f\n")
    args = ["--ref", ref]
    for i in range(14):
        args += ["--hyp", "s%02d=%s" % (i, write("m%d.hyp" % i, "a b\nd\n"))]
    svg = os.path.join(TMP, "many.svg")
    out_of(*args, "--plot", svg)
    root = ET.parse(svg).getroot()
    styles = []
    for g in root.iter(SVG + "g"):
        if g.get("class") == "legend":
            line, marker = g[0], g[1]
            # the marker's outline relative to its first point (shape, not place)
            nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", marker.get("d") or "")]
            shape = tuple(round(v - nums[i % 2], 1) for i, v in enumerate(nums))
            styles.append((line.get("stroke"), line.get("stroke-dasharray"), marker.tag,
                           marker.get("fill"), shape))
    eq(len(styles), 14, "a legend entry per system")
    eq(len(set(styles)), 14, "line style and marker differ for every system: %r" % styles)


def test_plot_moving_window_and_ci_bands():
    svg = os.path.join(TMP, "window.svg")
    W = 25
    args = TICO + ["--sgm-hyp", HYP]
    rows = rows_of(out_of(*args, "--per-segment", "--format", "csv", "--plot", svg,
                          "--plot-window", str(W), "--plot-ci", "--plot-points", "5000"))
    _, series = series_of(svg)
    xs, ys, lo, hi = series[("Fairseq", "r0")]
    for i in range(len(rows)):
        part = rows[max(0, i - W + 1):i + 1]
        h = sum(int(r["r0_hits"]) for r in part)
        t = sum(int(r["r0_total"]) for r in part)
        want = h / t if t else None
        check(want is None and ys[i] is None or abs(ys[i] - want) < 1e-12,
              "R0 over the last %d segments at %d: %r vs %r" % (W, i + 1, ys[i], want))
        if t:
            # Wilson 95% interval of h out of t
            z = 1.959963984540054
            p = h / t
            mid = (p + z * z / (2 * t)) / (1 + z * z / t)
            half = z * math.sqrt(p * (1 - p) / t + z * z / (4 * t * t)) / (1 + z * z / t)
            wlo = 0.0 if h <= 0 else min(mid - half, p)
            whi = 1.0 if h >= t else max(mid + half, p)
            check(abs(lo[i] - wlo) < 1e-12 and abs(hi[i] - whi) < 1e-12,
                  "Wilson band at %d" % (i + 1))
            check(lo[i] <= ys[i] <= hi[i], "the point lies in its band")
    _, _, olo, _ = series[("Fairseq", "one_minus_term")]
    eq(olo, None, "no band for 1-TERm (no count ratio)")


def test_plot_never_replaces_an_input_a_link_or_a_special_file():
    """--plot wrote a new file and renamed it over the path: `--plot ref.txt`
    (a slip of tab completion) replaced the reference with the figure (exit
    0), a symbolic link was replaced by a plain file (its target kept the old
    figure), and a FIFO (or, as root, /dev/stdout or /dev/null) was replaced
    by a plain file, so the reader got nothing. Now an input is refused (exit
    2, the file unchanged), a link's target is written, a special file is
    written in place."""
    ref = write("p-ref.txt", "x y z\nq r\n")
    hyp = write("p-hyp.txt", "x y\nq\n")
    for target in (ref, hyp):
        rc, out, err = run("--ref", ref, "--hyp", hyp, "--plot", target, check=False)
        eq(rc, 2, "--plot onto an input: " + err)
        check("input" in err, err)
    with open(ref) as f:
        eq(f.read(), "x y z\nq r\n", "the reference is unchanged")
    real = write("p-real.svg", "old")
    link = os.path.join(TMP, "p-link.svg")
    os.symlink(real, link)
    run("--ref", ref, "--hyp", hyp, "--plot", link)
    check(os.path.islink(link), "the link is still a link")
    with open(real) as f:
        check(f.read().startswith("<?xml"), "the link's target holds the figure")
    fifo = os.path.join(TMP, "p-fifo")
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        run("--ref", ref, "--hyp", hyp, "--plot", fifo)
        got = b""
        try:
            while True:
                b = os.read(fd, 65536)
                if not b:
                    break
                got += b
        except BlockingIOError:
            pass
    finally:
        os.close(fd)
    check(got.startswith(b"<?xml") and b"</svg>" in got, "the FIFO's reader got the figure")
    check(not os.path.isfile(fifo), "the FIFO is still a FIFO")


def test_output_write_error_is_an_error():
    """A full disk under stdout (/dev/full) exited 0 with the report lost."""
    if not os.path.exists("/dev/full"):
        return
    ref = write("f-ref.txt", "x y z\n")
    hyp = write("f-hyp.txt", "x y\n")
    for fmt in ("table", "json", "csv"):
        with open("/dev/full", "w") as full:
            p = subprocess.run([ADAPTMON, "score", "--ref", ref, "--hyp", hyp, "--format", fmt],
                               stdout=full, stderr=subprocess.PIPE, timeout=60)
        eq(p.returncode, 1, fmt + ": exit status")
        check(b"cannot write" in p.stderr, fmt + ": " + p.stderr.decode())


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))

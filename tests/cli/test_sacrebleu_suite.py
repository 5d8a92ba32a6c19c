#!/usr/bin/env python3
"""sacreBLEU 2.6.0's own test suite as an acceptance test of `adaptmon score`.

tests/data/sacrebleu/cases.json holds every pytest case of sacreBLEU's test/
directory (inputs, options, expected values, the test's tolerance; see
NOTICE.md there). Each case that adaptmon can express runs here through
`adaptmon score`: the texts go to temporary files, one segment per line, the
options become sacreBLEU-named flags, and the number in --json is compared
with the tolerance of the original test (pytest's `abs(x - y) < EPSILON`, or
the formatted or exact comparison it uses). A case the data file marks with a
reason (test-set download API, internal functions on given statistics) is
skipped. At the end the runner prints how many results equal the expected
value bit for bit, then "N passed, N failed, N skipped".

The test_http_* cases run every BLEU, chrF and TER case that runs here
through the HTTP API as well: a session per run with the options as session
options (bleu_tokenize, bleu_lowercase, bleu_smooth_method/value,
bleu_effective_order, bleu_max_ngram_order, chrf_*, ter_*), one POST per
segment (the first reference as `translation`, the others as the segment's
`references`), then /metrics (corpus) or the first POST answer (sentence
level) read; the numbers must be the same. Left out of the API: the one
case that compares BLEU's n-gram statistics (test_bleu.py::test_statistics:
the API answers scores, not BLEU's counts and totals, which `score --json`
has and checks here); and, as for `score`, the cases the
data file marks skipped (dataset downloads; BLEU.compute_bleu and other
internal functions on given statistics, which have no texts to post), and
the significance cases (paired bootstrap / approximate randomization over
several systems' files: `score --paired-*` only; a session's
relative_to_baseline is a different, documented statistic).

The test_golden_* cases check the chrF and TER values of
data/golden/multilingual.json (computed by sacreBLEU 2.6.0 on
data/multilingual/) through `adaptmon score`, bit for bit, with signatures.

An option whose flag this build of adaptmon lacks (probed as `score FLAG
--help`) fails its case with a message naming the flag: such a case is
expressible but not yet supported.
"""
import bz2
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from harness import ADAPTMON, ROOT, Skip, base, run_tests, serve, shutdown  # noqa: E402

SUITE = os.path.join(ROOT, "tests", "data", "sacrebleu")
with open(os.path.join(SUITE, "cases.json"), encoding="utf-8") as f:
    CASES = json.load(f)["cases"]
TMP = tempfile.mkdtemp(prefix="adaptmon-sacrebleu-")
EXACT = []  # ids of the cases whose every result equals the expected value bit for bit


def score(args, timeout=600):
    """Runs adaptmon score ARGS --json; returns the parsed output."""
    p = subprocess.run([ADAPTMON, "score", *args, "--json"], capture_output=True,
                       timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("adaptmon score %s: exit %d: %s" % (
            " ".join(args), p.returncode, p.stderr.decode("utf-8", "replace").strip()))
    return json.loads(p.stdout)


_KNOWN = {}


def accepted(args):
    """True when adaptmon score accepts the option args (probed as `score ARGS --help`:
    the options are parsed in order, an unknown one or a bad value is a usage error
    before --help is reached)."""
    key = tuple(args)
    if key not in _KNOWN:
        p = subprocess.run([ADAPTMON, "score", *args, "--help"], capture_output=True,
                           timeout=60)
        _KNOWN[key] = p.returncode == 0
    return _KNOWN[key]


def flag(alternatives, what, value=None):
    """The arguments of the first alternative flag this build accepts (with value,
    unless the alternative carries it after '='), else an AssertionError."""
    for a in alternatives:
        args = [a] if value is None or "=" in a else [a, value]
        if accepted(args):
            return args
    raise AssertionError("this build of adaptmon score has no flag for %s (tried %s)"
                         % (what, ", ".join(a.split("=")[0] for a in alternatives)))


# sacreBLEU's defaults (BLEU with a target language other than zh/ja, chrF):
# given explicitly in a case, they need no flag
DEFAULTS = {"tokenize": "13a", "smooth_method": "exp", "max_ngram_order": 4, "char_order": 6,
            "word_order": 0, "beta": 2}


def option_flags(metric, level, o):
    """sacreBLEU API options of a case as adaptmon score flags (sacreBLEU's CLI
    names first, then the names of adaptmon's session options)."""
    out = []
    for k, v in o.items():
        if v is None or v is False or DEFAULTS.get(k) == v:
            continue  # sacreBLEU's default, which is adaptmon score's too
        if k == "tokenize":
            out += flag(["--tokenize", "--bleu-tokenize"], "BLEU tokenize", str(v))
        elif k == "lowercase":
            out += flag(["-lc", "--lowercase", "--bleu-lowercase=true"], "BLEU lowercase")
        elif k == "smooth_method":
            out += flag(["--smooth-method", "--bleu-smooth-method"], "BLEU smooth_method", v)
        elif k == "smooth_value":
            out += flag(["--smooth-value", "--bleu-smooth-value"], "BLEU smooth_value",
                        repr(float(v)))
        elif k == "effective_order":
            if level == "sentence":
                continue  # per-segment BLEU is sentence BLEU with effective order
            out += flag(["--bleu-effective-order=true"], "BLEU effective order")
        elif k == "max_ngram_order":
            out += flag(["--bleu-max-ngram-order"], "BLEU max_ngram_order", str(v))
        elif k in ("char_order", "word_order", "beta"):
            out += ["--chrf-" + k.replace("_", "-"), str(v)]
        elif k in ("whitespace", "eps_smoothing"):
            out.append("--chrf-" + k.replace("_", "-"))
        elif k in ("normalized", "no_punct", "asian_support", "case_sensitive"):
            out.append("--ter-" + k.replace("_", "-"))
        else:
            raise AssertionError("option %s has no adaptmon flag in this runner" % k)
    return out


def write_lines(name, lines):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(l + "\n" for l in lines))
    return path


KEY = {"bleu": "bleu", "chrf": "chrf", "ter": "ter", "ter_tokenizer": "ter"}


def find_stats(obj):
    """The first object under obj with both "counts" and "totals" (BLEU statistics)."""
    if isinstance(obj, dict):
        if "counts" in obj and "totals" in obj:
            return obj
        for v in obj.values():
            r = find_stats(v)
            if r is not None:
                return r
    return None


def compare(cid, got, run):
    """Checks got against the run's expected value; returns True when bit-identical."""
    exp, cmp_ = run["expected"], run["compare"]
    kind = cmp_["kind"]
    if kind == "abs":
        if got is None or not abs(got - exp) < cmp_["tol"]:
            raise AssertionError("%s: got %r, sacreBLEU's test expects %r (tolerance %g)"
                                 % (cid, got, exp, cmp_["tol"]))
        return got == exp
    if kind == "format":
        s = cmp_["fmt"].format(got)
        if s != exp:
            raise AssertionError("%s: got %s (%r), expected %s" % (cid, s, got, exp))
        return False
    raise AssertionError("unknown comparison " + kind)


def run_texts(case, k, run):
    """One run of a case given as texts. Returns True when bit-identical."""
    cid, metric, level = case["id"], case["metric"], case["level"]
    tag = re.sub(r"[^A-Za-z0-9]+", "_", cid) + "_%d" % k
    args = ["--target-lang", case.get("target_lang", "en"),
            "--hyp", "h=" + write_lines(tag + ".hyp", run["hyps"])]
    for j, r in enumerate(run["refs"]):
        assert len(r) == len(run["hyps"])
        args += ["--ref", write_lines("%s.ref%d" % (tag, j), r)]
    args += option_flags(metric, level, run["options"])
    if level == "sentence" or run["compare"]["kind"] in ("ter_tokens",):
        args.append("--per-segment")
    d = score(args)
    if len(run["refs"]) > 1:
        want = "nrefs:%d|" % len(run["refs"])
        sig = d.get("sacrebleu", {}).get("bleu" if metric == "bleu" else metric, "")
        if not sig.startswith(want):
            raise AssertionError("%s: %d references but the signature says %r"
                                 % (cid, len(run["refs"]), sig))
    if run["compare"]["kind"] == "ter_tokens":
        seg = d["per_segment"][0]["systems"]["h"]
        if seg["ter"] != 0.0 or seg["ter_ref_len"] != run["expected"]["ref_len"]:
            raise AssertionError("%s: TER %r with reference length %r; expected TER 0 and %d "
                                 "tokens" % (cid, seg["ter"], seg["ter_ref_len"],
                                             run["expected"]["ref_len"]))
        return True
    if run["compare"]["kind"] == "bleu_stats":
        st = find_stats(d["systems"]["h"])
        if st is None:
            raise AssertionError("%s: no BLEU statistics (counts, totals) in the JSON" % cid)
        if st["counts"] != run["expected"]["counts"] or st["totals"] != run["expected"]["totals"]:
            raise AssertionError("%s: counts %r totals %r, expected %r" % (
                cid, st["counts"], st["totals"], run["expected"]))
        return True
    if level == "sentence":
        got = d["per_segment"][0]["systems"]["h"][KEY[metric]]
    else:
        got = d["systems"]["h"][KEY[metric]]
    if got is not None:
        got *= run.get("scale", 1.0)
    return compare(cid, got, run)


_SIG = {}


def significance(test, opts):
    """p-values of the paired test on the WMT17 systems (one adaptmon run per test,
    shared by its 15 cases)."""
    if test in _SIG:
        return _SIG[test]
    tok = flag(["--tokenize", "--bleu-tokenize"], "BLEU tokenize", opts["tokenize"])
    with bz2.open(os.path.join(SUITE, "wmt17_en_de_systems.json.bz2"), "rt",
                  encoding="utf-8") as f:
        data = json.load(f)
    args = ["--target-lang", "de", "--ref", write_lines("wmt17.ref", data["references"][0])]
    for s in data["systems"]:
        args += ["--hyp", "%s=%s" % (s["name"], write_lines(s["name"] + ".hyp", s["lines"]))]
    args += tok + [
             "--paired-bs" if test == "bs" else "--paired-ar", "--n-bootstrap", str(opts["n"]),
             "--seed", str(opts["seed"])]
    d = score(args, timeout=3600)
    p = {s["system"]: s["BLEU"]["p_value"] for s in d["significance"]["systems"]}
    _SIG[test] = p
    return p


def make_test(case):
    def test():
        if case.get("skip"):
            raise Skip(case["skip"])
        exact = True
        for k, run in enumerate(case["runs"]):
            if case["metric"] == "significance":
                p = significance(run["options"]["test"], run["options"])
                exact &= compare(case["id"], p.get(run["system"]), run)
            else:
                exact &= run_texts(case, k, run)
        if exact:
            EXACT.append(case["id"])
    return test


# ---- the multilingual golden values: chrF and TER through score ----------------
#
# data/golden/multilingual.json holds values computed by sacreBLEU 2.6.0 itself
# (each with its command line) on data/multilingual/; `adaptmon score` given the
# same files and flags must print exactly these numbers and signatures.

with open(os.path.join(ROOT, "data", "golden", "multilingual.json"), encoding="utf-8") as f:
    GOLDEN = json.load(f)
VALUED = ("--chrf-word-order", "--chrf-char-order", "--chrf-beta")


def golden_args(case):
    """adaptmon score arguments for a golden case's sacreBLEU command."""
    words = case["command"].split()[1:]
    folder = GOLDEN["sets"][case["set"]]["dir"]
    path = lambda name: os.path.join(ROOT, "data", "multilingual", folder, name)
    args, i = [], 0
    while i < len(words):
        w = words[i]
        if w == "-i":
            args += ["--hyp", "mt=" + path(words[i + 1])]
            i += 2
        elif w == "-m":
            i += 2
        elif w == "--sentence-level":
            args.append("--per-segment")
            i += 1
        elif w in VALUED:
            args += [w, words[i + 1]]
            i += 2
        elif w.startswith("-"):
            args.append(w)
            i += 1
        else:
            args += ["--ref", path(w)]
            i += 1
    return args


def same(case, got, want, what):
    if got != want:
        raise AssertionError("%s %s: got %r, sacreBLEU %r" % (case["id"], what, got, want))


def make_golden_test(case, sentence):
    def test():
        # the set's target language: "mlqepe-en-de" → de
        d = score(["--target-lang", case["set"].split("-")[2]] + golden_args(case))
        key = "chrf" if case["metric"] == "chrf" else "ter"
        same(case, d["sacrebleu"][key], case["signature"], "signature")
        if sentence:
            for k, want in enumerate(case["scores"]):
                same(case, d["per_segment"][k]["systems"]["mt"][key], want,
                     "segment %d" % (k + 1))
        else:
            same(case, d["systems"]["mt"][key], case["score"], "score")
            if key == "chrf":
                same(case, d["sacrebleu_names"]["chrf"], case["cli_json"]["name"], "name")
    return test


# Under valgrind (make valgrind) a deterministic sixth of the cases and none
# of the 30 significance cases (thousands of resamples of 16 systems): the
# exact values are the plain run's job, memory errors need the code paths.
VG_SAMPLE = 6 if os.environ.get("VALGRIND") == "1" else 1


def _vg_keep(i, case):
    return VG_SAMPLE == 1 or (i % VG_SAMPLE == 0 and case["metric"] != "significance")


def tests():
    ns = {}
    for i, case in enumerate(CASES):
        if not _vg_keep(i, case):
            continue
        name = "test_%03d_%s" % (i, re.sub(r"[^A-Za-z0-9]+", "_", case["id"]).strip("_"))
        ns[name] = make_test(case)
    ns.update(api_tests())
    for kind in ("corpus", "sentence"):
        for j, case in enumerate(GOLDEN[kind]):
            if case["metric"] in ("chrf", "ter") and _vg_keep(j, case):
                name = "test_golden_" + re.sub(r"[^A-Za-z0-9]+", "_", case["id"]).strip("_")
                ns[name] = make_golden_test(case, kind == "sentence")
    return ns


# ---- the same chrF and TER cases through the HTTP API ---------------------------
#
# A session per case with the options as session options, one POST per
# segment, then /metrics (corpus) or the POST answers (sentence level): the
# numbers must be those of `adaptmon score`, and so sacreBLEU's.

_API = {}


def api_client():
    if "c" not in _API:
        _API["s"], _API["c"] = serve()
    return _API["c"]


SESSION_OPTION = {"char_order": "chrf_char_order", "word_order": "chrf_word_order",
                  "beta": "chrf_beta", "whitespace": "chrf_whitespace",
                  "eps_smoothing": "chrf_eps_smoothing", "normalized": "ter_normalized",
                  "no_punct": "ter_no_punct", "asian_support": "ter_asian_support",
                  "case_sensitive": "ter_case_sensitive", "tokenize": "bleu_tokenize",
                  "lowercase": "bleu_lowercase", "smooth_method": "bleu_smooth_method",
                  "smooth_value": "bleu_smooth_value", "effective_order": "bleu_effective_order",
                  "max_ngram_order": "bleu_max_ngram_order"}


def session_options(case, run):
    """A case's sacreBLEU options as session options (sacreBLEU's defaults left out, as
    option_flags does; sentence BLEU runs with effective order anyway)."""
    opts = {}
    for k, v in run["options"].items():
        if case["metric"] == "bleu" and (v is None or v is False or DEFAULTS.get(k) == v):
            continue
        if k == "effective_order" and case["level"] == "sentence":
            continue
        opts[SESSION_OPTION[k]] = v
    return opts


def api_run(c, sid, case, run):
    """One run of a case through the API; returns (POST answers, /metrics)."""
    c.create_session(id=sid, source_lang="en", target_lang=case.get("target_lang", "en"),
                     options=session_options(case, run))
    answers = []
    for k, h in enumerate(run["hyps"]):
        seg = {"id": str(k + 1), "source": "", "translation": run["refs"][0][k],
               "hypotheses": {"h": h}}
        if len(run["refs"]) > 1:
            seg["references"] = [r[k] for r in run["refs"][1:]]
        a = c.post(base(sid) + "/segments", seg)
        if a.status != 201:
            raise AssertionError("%s: POST segment %d: %d %s" % (
                case["id"], k + 1, a.status, a.body[:300]))
        answers.append(a.json())
    return answers, c.jget(base(sid) + "/metrics")


def make_api_test(i, case):
    def test():
        c = api_client()
        for n, run in enumerate(case["runs"]):
            answers, metrics = api_run(c, "sb-%d-%d" % (i, n), case, run)
            key = KEY[case["metric"]]
            kind = run["compare"]["kind"]
            if kind == "ter_tokens":
                seg = answers[0]["scores"]["systems"]["h"]
                if seg["ter"] != 0.0 or seg["ter_ref_len"] != run["expected"]["ref_len"]:
                    raise AssertionError("%s (API): TER %r, reference length %r" % (
                        case["id"], seg["ter"], seg["ter_ref_len"]))
                continue
            if case["level"] == "sentence":
                got = answers[0]["scores"]["systems"]["h"][key]
            else:
                got = metrics["systems"]["h"][key]
            compare(case["id"] + " (API)", None if got is None else got * run.get("scale", 1.0),
                    run)
    return test


def api_tests():
    """test_http_* for every BLEU, chrF and TER case not skipped (several references as a
    segment's `references`)."""
    ns = {}
    for i, case in enumerate(CASES):
        if not _vg_keep(i, case):
            continue
        if case["metric"] in ("bleu", "chrf", "ter", "ter_tokenizer") and not case.get("skip") \
                and case["runs"] and all(r["compare"]["kind"] != "bleu_stats"
                                         for r in case["runs"]):
            name = "test_http_%03d_%s" % (i, re.sub(r"[^A-Za-z0-9]+", "_", case["id"]).strip("_"))
            ns[name] = make_api_test(i, case)
    return ns


def report_exact():
    """Lists the cases whose results equal sacreBLEU's expected values bit for bit (before
    the harness's summary line)."""
    if "c" in _API:
        shutdown(_API["s"], _API["c"])
    print("bit-identical to sacreBLEU's expected value (token checks included): %d"
          % len(EXACT))
    for cid in EXACT:
        print("  = " + cid)


if __name__ == "__main__":
    sys.exit(run_tests(tests(), teardown=report_exact))

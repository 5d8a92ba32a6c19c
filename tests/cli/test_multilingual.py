#!/usr/bin/env python3
"""Every case of data/golden/multilingual.json through `adaptmon score`.

The golden file holds what sacreBLEU 2.6.0 itself computed on data/multilingual/
(BLEU with every tokenizer it runs without a download, lowercased, -l defaults,
one and two references; chrF and TER with their options; corpus and
sentence level). Each case records its sacreBLEU command; this file turns that
command into the same `adaptmon score` run on the same files and compares:

* the score, exactly: adaptmon computes BLEU/chrF/TER operation for operation
  as sacreBLEU does and prints JSON numbers with 17 significant digits, so the
  double it holds reads back bit for bit. The golden file has the full-precision
  Python float ("score"; "scores" for the first 20 segments at sentence level),
  so equality is the test; a last-bit difference is a real difference in the
  order of operations and fails (the message shows both values);
* the signature, exactly (sacreBLEU's string); at sentence level sacreBLEU's
  BLEU signature says eff:yes, which is the corpus signature adaptmon prints
  with the effective order its per-segment BLEU always uses;
* for corpus BLEU also the statistics (counts, totals, sys_len, ref_len).

Flag mapping (the rest are passed through unchanged: adaptmon names its flags
as sacreBLEU does): REF... -> --ref REF (repeated), -i HYP -> --hyp h=HYP,
-m METRIC -> the metric compared, --sentence-level -> --per-segment.
No golden number is copied here: all come from the JSON file. Ends with
"N passed, N failed"; APITEST_ONLY=<regex> selects cases by id.
"""
import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from harness import ADAPTMON, DATA, base, run_tests, serve, shutdown  # noqa: E402

with open(os.path.join(DATA, "golden", "multilingual.json"), encoding="utf-8") as f:
    GOLD = json.load(f)
SETS = GOLD["sets"]
MULTI = os.path.join(DATA, "multilingual")


def score(args):
    """Runs adaptmon score ARGS --json; returns the parsed output."""
    p = subprocess.run([ADAPTMON, "score", *args, "--json"], capture_output=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError("adaptmon score %s: exit %d: %s" % (
            " ".join(args), p.returncode, p.stderr.decode("utf-8", "replace")))
    return json.loads(p.stdout)


# sacreBLEU options that take a value (the others are switches)
VALUED = {"-l", "--language-pair", "-tok", "--tokenize", "-s", "--smooth-method", "-sv",
          "--smooth-value", "--chrf-char-order", "--chrf-word-order", "--chrf-beta"}


def translate(case):
    """The adaptmon score arguments of a golden case's sacreBLEU command, and
    whether it is sentence level."""
    argv = shlex.split(case["command"])
    assert argv[0] == "sacrebleu", case["command"]
    folder = os.path.join(MULTI, SETS[case["set"]]["dir"])
    out, refs, sentence, i = [], [], False, 1
    while i < len(argv):
        a = argv[i]
        if a == "-i":
            out += ["--hyp", "h=" + os.path.join(folder, argv[i + 1])]
            i += 2
        elif a == "-m":
            if argv[i + 1] != case["metric"]:
                raise AssertionError("metric %s in %s" % (argv[i + 1], case["command"]))
            i += 2
        elif a == "--sentence-level":
            sentence = True
            i += 1
        elif a in VALUED:
            out += [a, argv[i + 1]]  # named as in sacreBLEU, with its value
            i += 2
        elif a.startswith("-"):
            out.append(a)  # a sacreBLEU switch, same name
            i += 1
        else:
            refs.append(os.path.join(folder, a))
            i += 1
    args = []
    for r in refs:
        args += ["--ref", r]
    args += out
    if sentence:
        args.append("--per-segment")
    return args, sentence


FIELD = {"bleu": "bleu", "chrf": "chrf", "ter": "ter"}


def check_corpus(case):
    args, _ = translate(case)
    d = score(args)
    got = d["systems"]["h"][FIELD[case["metric"]]]
    if got != case["score"]:
        raise AssertionError("%s: score %r, sacreBLEU %r" % (case["id"], got, case["score"]))
    sig = d["sacrebleu"][case["metric"]]
    if sig != case["signature"]:
        raise AssertionError("%s: signature %r, sacreBLEU %r" % (case["id"], sig,
                                                                  case["signature"]))
    if case["metric"] == "bleu":
        st = d["systems"]["h"]["bleu_stats"]
        for k in ("counts", "totals", "sys_len", "ref_len"):
            if st[k] != case[k]:
                raise AssertionError("%s: %s %r, sacreBLEU %r" % (case["id"], k, st[k], case[k]))


def check_sentence(case):
    args, _ = translate(case)
    d = score(args)
    got = [s["systems"]["h"][FIELD[case["metric"]]] for s in d["per_segment"]]
    want = case["scores"]
    m = re.match(r"first (\d+)$", case["segments"])
    n = int(m.group(1)) if m else len(want)
    if len(want) != n or len(got) < n:
        raise AssertionError("%s: %d segments, golden has %d" % (case["id"], len(got), len(want)))
    bad = [(k + 1, got[k], want[k]) for k in range(n) if got[k] != want[k]]
    if bad:
        raise AssertionError("%s: %d of %d segments differ, e.g. segment %d: %r, sacreBLEU %r" % (
            case["id"], len(bad), n, bad[0][0], bad[0][1], bad[0][2]))
    sig = d["sacrebleu"][case["metric"]]
    if case["metric"] == "bleu":
        sig = sig.replace("|eff:no|", "|eff:yes|")
    if sig != case["signature"]:
        raise AssertionError("%s: signature %r, sacreBLEU %r" % (case["id"], sig,
                                                                  case["signature"]))


def _name(case, level):
    return "test_%s_%s" % (level, re.sub(r"[^A-Za-z0-9]+", "_", case["id"].replace("+", "p")).strip("_"))


def _make(fn, case):
    return lambda: fn(case)


def test_golden_file_shape():
    """The file has what its header promises (197 corpus, 48 sentence cases),
    so that a truncated copy cannot pass by having fewer cases."""
    if len(GOLD["corpus"]) != 197 or len(GOLD["sentence"]) != 48:
        raise AssertionError("golden cases: %d corpus, %d sentence" % (len(GOLD["corpus"]),
                                                                      len(GOLD["sentence"])))


def test_refuses_unsupported_tokenizers():
    """ko-mecab, flores101/200 and spm: exit 2 with the reason, never 13a."""
    folder = os.path.join(MULTI, "mlqepe-en-de")
    args = ["--ref", os.path.join(folder, "pe.de"), "--hyp", os.path.join(folder, "mt.de")]
    for tok, why in (("ko-mecab", "mecab-ko-dic"), ("flores101", "SentencePiece"),
                     ("flores200", "SentencePiece"), ("spm", "SentencePiece")):
        p = subprocess.run([ADAPTMON, "score", *args, "--tokenize", tok], capture_output=True)
        err = p.stderr.decode()
        if p.returncode != 2 or why not in err:
            raise AssertionError("--tokenize %s: exit %d, %r" % (tok, p.returncode, err))
    p = subprocess.run([ADAPTMON, "score", *args, "-l", "en-ko"], capture_output=True)
    err = p.stderr.decode()
    if p.returncode != 2 or "--tokenize" not in err or "ko-mecab" not in err:
        raise AssertionError("-l en-ko: exit %d, %r" % (p.returncode, err))


def test_reference_files_must_have_equal_lengths():
    folder = os.path.join(MULTI, "mlqepe-et-en-2ref")
    short = os.path.join(MULTI, "tatoeba-en-ja-2ref", "ref-1.ja")  # 75 lines, not 300
    p = subprocess.run([ADAPTMON, "score", "-r", os.path.join(folder, "ref-1.en"), short,
                        "--hyp", os.path.join(folder, "mt.en")], capture_output=True)
    if p.returncode == 0 or "lines" not in p.stderr.decode():
        raise AssertionError("refs of different lengths: exit %d, %r" % (
            p.returncode, p.stderr.decode()))


def test_option_given_twice_is_a_usage_error():
    folder = os.path.join(MULTI, "mlqepe-en-de")
    base = ["--ref", os.path.join(folder, "pe.de"), "--hyp", os.path.join(folder, "mt.de")]
    for extra in (["--tokenize", "13a", "--tokenize", "intl"],
                  ["--tokenize", "13a", "--bleu-tokenize", "intl"],
                  ["-lc", "--lowercase"],
                  ["--target-lang", "de", "-l", "en-de"],
                  ["--src", os.path.join(folder, "src.en"), "--src", os.path.join(folder, "src.en")],
                  ["--json", "--format", "csv"],
                  ["--paired-bs", "--paired-ar"],
                  ["--smooth-method", "floor", "-s", "exp"]):
        p = subprocess.run([ADAPTMON, "score", *base, *extra], capture_output=True)
        if p.returncode != 2 or "already given" not in p.stderr.decode():
            raise AssertionError("%s: exit %d, %r" % (extra, p.returncode, p.stderr.decode()))


def test_significance_uses_the_bleu_options():
    """--paired-bs resamples BLEU with the run's smoothing and n-gram order:
    its full-sample score is the totals' BLEU (it was >100 with order 2)."""
    folder = os.path.join(MULTI, "mlqepe-en-de")
    for extra in (["-s", "floor", "--bleu-max-ngram-order", "2"], ["-s", "add-k", "-sv", "2"],
                  ["--bleu-effective-order", "-lc"]):
        d = score(["--ref", os.path.join(folder, "pe.de"), "--hyp", "a=" + os.path.join(
            folder, "mt.de"), "--hyp", "b=" + os.path.join(folder, "pe.de"), "--paired-bs",
            "--n-bootstrap", "20", *extra])
        got = d["significance"]["systems"][0]["BLEU"]["score"]
        if got != d["systems"]["a"]["bleu"]:
            raise AssertionError("%s: significance BLEU %r, totals %r" % (
                extra, got, d["systems"]["a"]["bleu"]))


def test_significance_with_two_references():
    """--paired-bs with two references resamples each segment's statistics
    against both: the full-sample scores equal the totals for BLEU, chrF2,
    chrF2++ (its own best reference) and TER (average reference length)."""
    folder = os.path.join(MULTI, "mlqepe-et-en-2ref")
    d = score(["-r", os.path.join(folder, "ref-1.en"), os.path.join(folder, "ref-2.en"),
               "--hyp", "a=" + os.path.join(folder, "mt.en"),
               "--hyp", "b=" + os.path.join(folder, "ref-1.en"), "--paired-bs",
               "--n-bootstrap", "20"])
    tot = d["systems"]["a"]
    sig = d["significance"]["systems"][0]
    for key, col in (("bleu", "BLEU"), ("chrf", "chrF2"), ("chrfpp", "chrF2++"), ("ter", "TER")):
        if sig[col]["score"] != tot[key]:
            raise AssertionError("%s: significance %r, totals %r" % (col, sig[col]["score"],
                                                                     tot[key]))


# ---- the API: a live session with the same options gives the same BLEU ---

def _lines(folder, name):
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def _session_bleu(client, sid, case, options, target):
    """Posts every segment of case's set (one reference) to a new session with
    the given options; returns (its metrics' BLEU, the session echo)."""
    st = SETS[case["set"]]
    folder = os.path.join(MULTI, st["dir"])
    hyps, refs = _lines(folder, st["hypothesis"]), _lines(folder, st["references"][0])
    r = client.post("/v1/sessions", {"id": sid, "source_lang": "en", "target_lang": target,
                                     "options": options})
    if r.status != 201:
        raise AssertionError("create %s: %d %s" % (sid, r.status, r.body[:300]))
    echo = r.json()
    segs = [{"id": str(i + 1), "translation": refs[i], "hypothesis": hyps[i]}
            for i in range(len(refs))]
    for k in range(0, len(segs), 100):
        r = client.post(base(sid) + "/segments", segs[k:k + 100])
        if r.status != 200:
            raise AssertionError("batch: %d %s" % (r.status, r.body[:300]))
    m = client.jget(base(sid) + "/metrics")
    return list(m["systems"].values())[0]["bleu"], echo


def test_api_sessions_reproduce_corpus_bleu():
    """Corpus BLEU cases with one reference whose options a session has
    (tokenizer, lowercase, -l target): the session's BLEU is sacreBLEU's,
    and its echo names the tokenizer that ran."""
    server, client = serve()
    try:
        n = 0
        for case in GOLD["corpus"]:
            if case["metric"] != "bleu" or case["nrefs"] != 1:
                continue
            if not case["set"].startswith(("tatoeba-en-ja", "mlqepe-en-zh-raw")) and \
                    "tok=13a" not in case["id"]:
                continue
            argv = shlex.split(case["command"])
            opts, target = {}, "en"
            if "--tokenize" in argv:
                opts["bleu_tokenize"] = argv[argv.index("--tokenize") + 1]
            if "-lc" in argv:
                opts["bleu_lowercase"] = True
            if "-l" in argv:
                target = argv[argv.index("-l") + 1].split("-")[1]
            if VG_SAMPLE > 1 and n >= 3:
                break  # under valgrind three sessions show the paths
            n += 1
            got, echo = _session_bleu(client, "ml%d" % n, case, opts, target)
            if got != case["score"]:
                raise AssertionError("%s (session %r, %s): BLEU %r, sacreBLEU %r" % (
                    case["id"], opts, target, got, case["score"]))
            tok = re.search(r"tok:([^|]+)", case["signature"]).group(1)
            want = "ja-mecab" if tok.startswith("ja-mecab") else tok
            if echo["options"]["bleu_tokenize"] != want:
                raise AssertionError("%s: echo bleu_tokenize %r" % (case["id"],
                                                                    echo["options"]["bleu_tokenize"]))
        if n < (3 if VG_SAMPLE > 1 else 20):
            raise AssertionError("only %d API cases" % n)
    finally:
        shutdown(server, client)


def test_api_two_references():
    """A session whose segments carry 'references' gives sacreBLEU's
    two-reference BLEU, chrF2, chrF2++ and TER (default options)."""
    st = SETS["mlqepe-et-en-2ref"]
    folder = os.path.join(MULTI, st["dir"])
    hyps = _lines(folder, st["hypothesis"])
    r1, r2 = (_lines(folder, n) for n in st["references"])
    want = {}
    for case in GOLD["corpus"]:
        if case["set"] == "mlqepe-et-en-2ref" and case["nrefs"] == 2:
            cmd = case["command"]
            if case["metric"] == "bleu" and cmd.endswith("--tokenize 13a"):
                want["bleu"] = case["score"]
            elif case["metric"] == "chrf" and cmd.endswith("-m chrf"):
                want["chrf"] = case["score"]
            elif case["metric"] == "chrf" and cmd.endswith("--chrf-word-order 2"):
                want["chrfpp"] = case["score"]
            elif case["metric"] == "ter" and cmd.endswith("-m ter"):
                want["ter"] = case["score"]
    if len(want) != 4:
        raise AssertionError("golden cases found: %r" % sorted(want))
    server, client = serve()
    try:
        r = client.post("/v1/sessions", {"id": "two", "source_lang": "et", "target_lang": "en"})
        if r.status != 201:
            raise AssertionError("create: %d %s" % (r.status, r.body[:300]))
        segs = [{"id": str(i + 1), "translation": r1[i], "references": [r2[i]],
                 "hypothesis": hyps[i]} for i in range(len(r1))]
        for k in range(0, len(segs), 100):
            r = client.post(base("two") + "/segments", segs[k:k + 100])
            if r.status != 200:
                raise AssertionError("batch: %d %s" % (r.status, r.body[:300]))
        got = list(client.jget(base("two") + "/metrics")["systems"].values())[0]
        for k, v in want.items():
            if got[k] != v:
                raise AssertionError("%s: session %r, sacreBLEU %r" % (k, got[k], v))
        r = client.post(base("two") + "/segments", {"id": "x", "translation": "a",
                                                    "references": [], "hypothesis": "a"})
        if r.status != 422:
            raise AssertionError("empty references: %d" % r.status)
    finally:
        shutdown(server, client)


# Under valgrind (make valgrind) a deterministic sixth of the cases, spread
# over every metric and option: the exact values are the plain run's job,
# memory errors need the code paths, and 245 runs would take 20 minutes.
VG_SAMPLE = 6 if os.environ.get("VALGRIND") == "1" else 1
for _i, _c in enumerate(GOLD["corpus"]):
    if _i % VG_SAMPLE == 0:
        globals()[_name(_c, "corpus")] = _make(check_corpus, _c)
for _i, _c in enumerate(GOLD["sentence"]):
    if _i % VG_SAMPLE == 0:
        globals()[_name(_c, "sentence")] = _make(check_sentence, _c)

if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))

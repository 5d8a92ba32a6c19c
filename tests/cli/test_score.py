#!/usr/bin/env python3
"""Black-box tests of `adaptmon score` against the golden values in data/golden/.

The expected numbers are read from data/golden/*.json (computed by sacreBLEU
2.6.0, rk.rb and evaluate_term_wmt.py); this file only compares. Runs with the
Python standard library only and ends with the line "N passed, N failed".
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from harness import ADAPTMON, DATA, DEV, ROOT, run_tests  # noqa: E402,F401
SRC = os.path.join(DEV, "dev.en-fr.en.sgm")
REF = os.path.join(DEV, "dev.en-fr.fr.sgm")
HYP = os.path.join(DEV, "en-fr.dev.txt.truecased.sgm")

with open(os.path.join(DATA, "golden", "tico19-enfr-dev.json"), encoding="utf-8") as f:
    GOLD = json.load(f)
with open(os.path.join(DATA, "golden", "seeds.json"), encoding="utf-8") as f:
    SEEDS = json.load(f)

TMP = tempfile.mkdtemp(prefix="adaptmon-cli-")


def run(*args, check=True, timeout=120):
    """Runs adaptmon score ARGS; returns (exit status, stdout, stderr)."""
    p = subprocess.run([ADAPTMON, "score", *args], capture_output=True, timeout=timeout)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if check and p.returncode != 0:
        raise AssertionError("exit %d: %s" % (p.returncode, err))
    return p.returncode, out, err


def run_json(*args):
    return json.loads(run(*args, "--json")[1])


def write(name, data):
    path = os.path.join(TMP, name)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    return path


def close(a, b, tol, what):
    if a is None or b is None or not math.isclose(a, b, rel_tol=0, abs_tol=tol):
        raise AssertionError("%s: got %r, expected %r (tol %g)" % (what, a, b, tol))


def eq(a, b, what):
    if a != b:
        raise AssertionError("%s: got %r, expected %r" % (what, a, b))


def per_seg(d, system):
    """Per-segment objects of a --per-segment --json run, keyed by id."""
    return {s["id"]: s["systems"][system] for s in d["per_segment"]}


# ---- TICO-19 dev set -------------------------------------------------------

def test_simianer2019_tico_corpus_and_segments():
    d = run_json("--profile", "simianer2019", "--stopwords", "iso", "--target-lang", "fr",
                 "--sgm-ref", REF, "--sgm-hyp", "Fairseq=" + HYP, "--per-segment")
    g = GOLD["simianer2019_rk.rb"]
    tot = d["systems"]["Fairseq"]
    for key in ("r0", "r1", "r01"):
        eq([tot[key]["hits"], tot[key]["total"]], g[key], key)
    segs = per_seg(d, "Fairseq")
    eq(len(segs), GOLD["segments"], "segments")
    for gs in GOLD["per_segment"]:
        s = segs[gs["id"]]
        for key in ("r0", "r1", "r01"):
            exp = gs[key + "_rk.rb"]
            c = s[key]
            if c["total"] == 0:
                eq(c["score"], None, "segment %s %s null" % (gs["id"], key))
                eq(exp, 0.0, "rk.rb prints 0.0 for an empty count")
            else:
                close(c["score"], exp, 1e-12, "segment %s %s" % (gs["id"], key))


def test_alam2021_tico_corpus_and_segments():
    d = run_json("--profile", "alam2021", "--sgm-src", SRC, "--sgm-ref", REF,
                 "--sgm-hyp", "Fairseq=" + HYP, "--per-segment")
    g = GOLD["alam2021_evaluate_term_wmt.py_no_lemmatizer"]
    r = d["systems"]["Fairseq"]
    eq(r["exact_match_correct"], g["exact_match_correct"], "exact match correct")
    eq(r["exact_match_terms"], g["exact_match_terms"], "exact match terms")
    close(r["window_overlap"]["2"], g["window_overlap_2"], 1e-12, "WO2")
    close(r["window_overlap"]["3"], g["window_overlap_3"], 1e-12, "WO3")
    close(r["one_minus_term"], g["one_minus_term_ter"], 1e-12, "1-TERm")
    segs = {s["id"]: s for s in r["segments"]}
    for gs in GOLD["per_segment"]:
        s = segs[gs["id"]]
        eq(s["exact_match_correct"], gs["exact_match_correct_alam2021"], "EM " + gs["id"])
        eq(s["exact_match_terms"], gs["exact_match_terms_alam2021"], "terms " + gs["id"])
        close(s["window_overlap"]["2"], gs["window_overlap_2_alam2021"], 1e-12, "WO2 " + gs["id"])
        close(s["window_overlap"]["3"], gs["window_overlap_3_alam2021"], 1e-12, "WO3 " + gs["id"])
        close(s["term_ter"], gs["term_ter_alam2021"], 1e-12, "TERm " + gs["id"])


def test_sacrebleu_tico_corpus_and_segments():
    # sacreBLEU sees the text as it is: no tag stripping or entity decoding.
    d = run_json("--no-strip-tags", "--sgm-ref", REF, "--sgm-hyp", "Fairseq=" + HYP,
                 "--per-segment")
    g = GOLD["sacrebleu_2.6.0"]
    tot = d["systems"]["Fairseq"]
    close(tot["bleu"], g["bleu"], 1e-9, "BLEU")
    close(tot["chrf"], g["chrf2"], 1e-9, "chrF2")
    close(tot["chrfpp"], g["chrf2pp"], 1e-9, "chrF2++")
    close(tot["ter"], g["ter"], 1e-9, "TER")
    segs = per_seg(d, "Fairseq")
    for gs in GOLD["per_segment"]:
        s = segs[gs["id"]]
        close(s["bleu"], gs["sentence_bleu"], 1e-9, "sentence BLEU " + gs["id"])
        close(s["chrf"], gs["sentence_chrf2"], 1e-9, "sentence chrF2 " + gs["id"])
        close(s["ter"], gs["sentence_ter"], 1e-9, "sentence TER " + gs["id"])
    d = run_json("--no-strip-tags", "--ter-case-sensitive", "--sgm-ref", REF,
                 "--sgm-hyp", "Fairseq=" + HYP)
    close(d["systems"]["Fairseq"]["ter"], g["ter_case_sensitive"], 1e-9, "TER -c")
    if "ter:cs" not in d["signature"]:
        raise AssertionError("signature lacks ter:cs: " + d["signature"])


def test_plain_text_equals_sgml():
    # The same session from plain-text files gives the same totals.
    d = run_json("--sgm-src", SRC, "--sgm-ref", REF, "--sgm-hyp", "Fairseq=" + HYP,
                 "--per-segment")
    ids = [s["id"] for s in d["per_segment"]]
    texts = {}
    for name, path in (("src", SRC), ("ref", REF), ("hyp", HYP)):
        texts[name] = sgml_texts(path)
    for name in texts:
        write(name + ".txt", "".join(texts[name][i] + "\n" for i in ids))
    p = run_json("--src", os.path.join(TMP, "src.txt"), "--ref", os.path.join(TMP, "ref.txt"),
                 "--hyp", "Fairseq=" + os.path.join(TMP, "hyp.txt"))
    a, b = d["systems"]["Fairseq"], p["systems"]["Fairseq"]
    for key in ("r0", "r1", "r01", "bleu", "chrf", "chrfpp", "ter"):
        eq(b[key], a[key], key)


def sgml_texts(path):
    """Segment texts as data/README.md defines them (test-side reader)."""
    import re
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'\s*<seg id="([^"]+)">(.*)</seg>\s*$', line)
            if not m:
                continue
            t = re.sub(r"<[^>]*>", "", m.group(2))
            t = (t.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
                 .replace("&apos;", "'").replace("&amp;", "&"))
            out[m.group(1)] = " ".join(t.split())
    return out


def test_by_doc_sessions():
    one = run_json("--sgm-ref", REF, "--sgm-hyp", "Fairseq=" + HYP)
    many = run_json("--by-doc", "--sgm-ref", REF, "--sgm-hyp", "Fairseq=" + HYP)
    eq(many["sessions"], 13, "13 documents")
    a, b = one["systems"]["Fairseq"], many["systems"]["Fairseq"]
    eq(b["segments"], a["segments"], "segments")
    # Separate histories: more words are first seen (R0 grows), BLEU is unchanged.
    if not b["r0"]["total"] > a["r0"]["total"]:
        raise AssertionError("per-document sessions should count more zero-shot words")
    eq(b["r01"]["total"], b["r0"]["total"] + b["r1"]["total"], "R0+1 = R0 + R1 counts")
    close(b["bleu"], a["bleu"], 1e-12, "BLEU does not depend on sessions")


# ---- worked examples of the papers ------------------------------------------

def slides_files(seeds_key):
    segs = SEEDS[seeds_key]["segments"]
    ref = write(seeds_key + ".ref", "".join(s["translation"] + "\n" for s in segs))
    hyp = write(seeds_key + ".hyp", "".join(s["hypothesis"] + "\n" for s in segs))
    return ref, hyp


def check_slides(d, system, seeds_key, per_segment=True):
    g = SEEDS[seeds_key]
    tot = d["systems"][system]
    for key in ("r0", "r1", "r01"):
        eq([tot[key]["hits"], tot[key]["total"]], g["session"][key], "session " + key)
    if per_segment:
        for gs, s in zip(g["segments"], d["per_segment"]):
            sy = s["systems"][system]
            for key in ("r0", "r1", "r01"):
                eq([sy[key]["hits"], sy[key]["total"]], gs[key], key)
            words = {w["word"]: [w["shot"], w["hits"][system]] for w in s["words"]}
            eq(words, gs["words"], "words")


def test_slides_standard_profile():
    ref, hyp = slides_files("simianer2019_slides")
    d = run_json("--target-lang", "en", "--ref", ref, "--hyp", "adaptive=" + hyp,
                 "--per-segment")
    check_slides(d, "adaptive", "simianer2019_slides")
    if "sw:snowball" not in d["signature"]:
        raise AssertionError("English default stopwords are Snowball's: " + d["signature"])


def test_slides_simianer2019_profile_custom_stopwords():
    ref, hyp = slides_files("simianer2019_slides")
    sw = write("the.txt", "the\nThe\n")
    d = run_json("--profile", "simianer2019", "--stopwords-file", sw, "--ref", ref,
                 "--hyp", "adaptive=" + hyp, "--per-segment")
    check_slides(d, "adaptive", "simianer2019_slides")


def test_nonadaptive_second_system():
    ref, hyp = slides_files("simianer2019_slides")
    segs = SEEDS["simianer2019_nonadaptive"]["segments"]
    hyp2 = write("nonadaptive.hyp", "".join(s["hypothesis"] + "\n" for s in segs))
    d = run_json("--target-lang", "en", "--ref", ref, "--hyp", "adaptive=" + hyp,
                 "--hyp", "static=" + hyp2)
    check_slides(d, "adaptive", "simianer2019_slides", per_segment=False)
    check_slides(d, "static", "simianer2019_nonadaptive", per_segment=False)


def test_unknown_languages_are_never_silent():
    """A --target-lang that is no ISO 639 code (a typo) or has no stopword
    list, or a --source-lang that is no code, exits 0 as before but says so
    on stderr, as session creation answers it in "warnings"."""
    ref = write("badlang.fr", "Le chat est sur la table .\n")
    hyp = write("badlang.hyp.fr", "Le chat est sous la table .\n")
    rc, out, err = run("--target-lang", "xx-not-a-lang", "--ref", ref, "--hyp", hyp)
    if "warning: --target-lang 'xx-not-a-lang' is not an ISO 639" not in err:
        raise AssertionError("no warning for an unknown target language: %r" % err)
    rc, out, err = run("--target-lang", "tlh", "--ref", ref, "--hyp", hyp)
    if "warning: no stopword list for --target-lang 'tlh'" not in err:
        raise AssertionError("no warning for a language without stopwords: %r" % err)
    rc, out, err = run("--target-lang", "tlh", "--stopwords", "none", "--ref", ref, "--hyp", hyp)
    eq(err, "", "--stopwords none is a choice: no warning")
    rc, out, err = run("--target-lang", "fr", "--source-lang", "qq-typo", "--ref", ref,
                       "--hyp", hyp)
    if "warning: --source-lang 'qq-typo' is not an ISO 639" not in err:
        raise AssertionError("no warning for an unknown source language: %r" % err)


def test_no_target_lang_is_never_silent():
    """Issue 24 §3: without --target-lang, French stopwords counted as content
    words without a word. Now a warning on stderr and |warn:no-target-lang;
    with the language the signature names the tokenizer and list that ran."""
    ref = write("nolang.fr", "Le chat est sur la table .\nLa table est rouge .\n")
    hyp = write("nolang.hyp.fr", "Le chat est sous la table .\nUne table rouge .\n")
    rc, out, err = run("--ref", ref, "--hyp", hyp)
    if "no --target-lang" not in err or "warning" not in err:
        raise AssertionError("no warning on stderr: %r" % err)
    d = run_json("--ref", ref, "--hyp", hyp)
    if not d["signature"].endswith("|warn:no-target-lang"):
        raise AssertionError("signature: " + d["signature"])
    if "|sw:none|" not in d["signature"] or "|tok:intl|" not in d["signature"]:
        raise AssertionError("signature: " + d["signature"])
    rc, out, err = run("--target-lang", "fr", "--ref", ref, "--hyp", hyp)
    eq(err, "", "no warning with --target-lang")
    d = run_json("--target-lang", "fr", "--ref", ref, "--hyp", hyp)
    if "warn" in d["signature"] or "|sw:snowball|" not in d["signature"]:
        raise AssertionError("signature: " + d["signature"])
    # le/la/est/sur are stopwords now: fewer content words than without
    d0 = run_json("--ref", ref, "--hyp", hyp)
    def n(x):
        return next(iter(x["systems"].values()))["r0"]["total"]
    if not n(d) < n(d0):
        raise AssertionError("R0 totals %r vs %r" % (n(d), n(d0)))
    # a zh target: the tokenizer and list that ran are named, never auto
    zref = write("nolang.zh", "我们今天在北京开会。\n")
    d = run_json("--target-lang", "zh", "--ref", zref, "--hyp", zref)
    if "|tok:zh-friso-1.6.4|" not in d["signature"] or "|sw:iso|" not in d["signature"]:
        raise AssertionError("signature: " + d["signature"])


def test_chinese_recall_words_are_friso_words():
    """Issue 24 §2: a zh target's content words are friso's words
    (tok:zh-friso-1.6.4), not one per character; BLEU keeps sacreBLEU's zh.
    On MLQE-PE en-zh (post-edits as translations, MT as hypotheses) R0/R1
    change against --defaults 2 (the character rule), BLEU does not, and a
    second run gives the same numbers."""
    zref = write("friso.zh", "我们今天在北京开会。\n")
    d = run_json("--target-lang", "zh", "--ref", zref, "--hyp", zref, "--per-segment")
    words = [w["word"] for w in d["per_segment"][0]["words"]]
    eq(words, ["今天", "北京", "开会"], "content words (我们 and 在 are stopwords)")
    folder = os.path.join(DATA, "multilingual", "mlqepe-en-zh")
    args = ("--target-lang", "zh", "--ref", os.path.join(folder, "pe.tok.zh"),
            "--hyp", os.path.join(folder, "mt.zh"))
    def sysd(*extra):
        d = run_json(*args, *extra)
        return d["signature"], next(iter(d["systems"].values()))
    sig, new = sysd()
    sig2, old = sysd("--defaults", "2")
    if "|tok:zh-friso-1.6.4|" not in sig or "|bleu:zh" not in sig or "|tok:zh|" not in sig2:
        raise AssertionError("signatures: %s / %s" % (sig, sig2))
    for k in ("r0", "r1"):
        if new[k] == old[k]:
            raise AssertionError("%s unchanged by friso: %r" % (k, new[k]))
    eq(new["bleu"], old["bleu"], "BLEU keeps sacreBLEU's zh tokenizer")
    # words recur less than characters: more of them are new (shot 0)
    if not new["r0"]["total"] > old["r0"]["total"]:
        raise AssertionError("R0 totals %r vs %r" % (new["r0"], old["r0"]))
    eq(sysd(), (sig, new), "a second run")


def test_japanese_recall_words_are_mecab_words():
    """Issue 24 §2: a ja target's content words are MeCab's (tok:ja-mecab), also
    when a TMX background vocabulary is counted (its words must be the same:
    before, the background was tokenized per character)."""
    bg = write("bg.tmx", '<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4">'
               '<header srclang="en" datatype="plaintext" segtype="sentence" adminlang="en" '
               'creationtool="t" creationtoolversion="1" o-tmf="t"/><body><tu>'
               '<tuv xml:lang="en"><seg>The electric car.</seg></tuv>'
               '<tuv xml:lang="ja"><seg>\u96fb\u6c17\u81ea\u52d5\u8eca\u306e\u5145\u96fb\u3002'
               '</seg></tuv></tu></body></tmx>\n')
    # 電気自動車の充電って、時間がかかるのよ。
    ref = write("mecab.ja", "\u96fb\u6c17\u81ea\u52d5\u8eca\u306e\u5145\u96fb\u3063\u3066"
                "\u3001\u6642\u9593\u304c\u304b\u304b\u308b\u306e\u3088\u3002\n")
    d = run_json("--target-lang", "ja", "--ref", ref, "--hyp", ref, "--per-segment")
    # MeCab's version and dictionary follow the name (tok:ja-mecab-0.996-IPA), as sacreBLEU
    if "|tok:ja-mecab-" not in d["signature"] or "|sw:iso|" not in d["signature"]:
        raise AssertionError("signature: " + d["signature"])
    words = [w["word"] for w in d["per_segment"][0]["words"]]
    for w in ("\u96fb\u6c17", "\u81ea\u52d5\u8eca", "\u5145\u96fb", "\u6642\u9593"):
        if w not in words:
            raise AssertionError("%r not among the content words %r" % (w, words))
    if "\u306e" in words:  # の is a stopword
        raise AssertionError("stopword kept: %r" % words)
    d = run_json("--target-lang", "ja", "--background", bg, "--rare-threshold", "0",
                 "--ref", ref, "--hyp", ref, "--per-segment")
    left = [w["word"] for w in d["per_segment"][0]["words"]]
    eq([w for w in words if w not in left], ["\u96fb\u6c17", "\u81ea\u52d5\u8eca",
                                              "\u5145\u96fb"],
       "the background's MeCab words are the ones filtered out")


def test_alam2021_table2_standard_profile():
    t = SEEDS["alam2021_table2"]
    gloss = write("table2.json", json.dumps(
        [{"source": s, "targets": tg} for s, tg in t["glossary"]]))
    src = write("table2.src", t["source"] + "\n")
    ref = write("table2.ref", t["translation"] + "\n")
    args = ["--source-lang", "en", "--target-lang", "es", "--glossary", gloss,
            "--src", src, "--ref", ref]
    for i, o in enumerate(t["outputs"]):
        args += ["--hyp", "out%d=%s" % (i + 1, write("table2.hyp%d" % i, o["hypothesis"] + "\n"))]
    d = run_json(*args)
    for i, o in enumerate(t["outputs"]):
        terms = d["systems"]["out%d" % (i + 1)]["terms"]
        eq([terms["exact"], terms["instances"]], o["exact_match"], "exact match out%d" % (i + 1))
        close(terms["partial_match"] * terms["instances"], o["partial_match"][0], 1e-12,
              "partial match out%d" % (i + 1))


def test_glossary_language_header():
    """A CSV glossary whose header names the languages (here swapped,
    fr,en) scores like the plain source,target file; a header naming other
    languages than --source-lang/--target-lang is refused."""
    src = write("lh.src", "a dry cough and a fever\n")
    ref = write("lh.ref", "une toux sèche et de la fièvre\n")
    hyp = write("lh.hyp", "une toux et une température\n")
    plain = write("lh-plain.csv", "cough,toux\nfever,fièvre\n")
    swapped = write("lh-swapped.csv", "French,English\ntoux,cough\nfièvre,fever\n")
    base = ["--source-lang", "en", "--target-lang", "fr-FR", "--src", src, "--ref", ref,
            "--hyp", "mt=" + hyp]
    want = run_json(*(base + ["--glossary", plain]))
    eq(want["systems"]["mt"]["terms"]["instances"], 2, "two term instances")
    eq(run_json(*(base + ["--glossary", swapped]))["systems"], want["systems"],
       "language header mapped by language")
    other = write("lh-other.csv", "de,es\nHusten,tos\n")
    expect_error(base + ["--glossary", other], 1, "not the source language en and the target language fr-FR")


def test_term_never_lowers_below_ter():
    # 1 - TERm <= 1 - TER: term weights only add cost.
    d = run_json("--source-lang", "en", "--target-lang", "fr", "--sgm-src", SRC, "--sgm-ref", REF,
                 "--sgm-hyp", "Fairseq=" + HYP, "--per-segment")
    for s in d["per_segment"]:
        sy = s["systems"]["Fairseq"]
        if sy["term_edits"] < sy["ter_edits"]:
            raise AssertionError("segment %s: TERm edits below TER edits" % s["id"])
        if "terms" not in sy or sy["terms"]["instances"] == 0:
            eq(sy["term_edits"], sy["ter_edits"], "no terms: TERm = TER (%s)" % s["id"])


# ---- bad input ----------------------------------------------------------------

def expect_error(args, status, needle):
    rc, out, err = run(*args, check=False)
    eq(rc, status, "exit status for %r (stderr %r)" % (args, err))
    if needle not in err:
        raise AssertionError("stderr %r lacks %r" % (err, needle))
    if "AddressSanitizer" in err or "runtime error" in err:
        raise AssertionError("sanitizer report: " + err)


def test_invalid_utf8_is_rejected_with_line():
    ref = write("bad.ref", b"fine line\nbad \xff byte\n")
    hyp = write("bad.hyp", b"a\nb\n")
    expect_error(["--ref", ref, "--hyp", hyp], 1, "bad.ref:2:5: invalid UTF-8")


def test_nul_byte_is_rejected():
    ref = write("nul.ref", b"a\x00b\n")
    hyp = write("nul.hyp", b"x\n")
    expect_error(["--ref", ref, "--hyp", hyp], 1, "NUL byte")


def test_mismatched_line_counts():
    ref = write("three.ref", "a\nb\nc\n")
    hyp = write("two.hyp", "a\nb\n")
    expect_error(["--ref", ref, "--hyp", hyp], 1, "has 2 lines but")


def test_unknown_option_and_bad_values():
    expect_error(["--frobnicate", "1"], 2, "unknown option")
    expect_error(["--tokenizer", "moses", "--ref", "x", "--hyp", "y"], 2, "invalid value 'moses'")
    expect_error(["--k", "-1", "--ref", "x", "--hyp", "y"], 2, "option 'k'")
    expect_error(["--windows", "2,,3", "--ref", "x", "--hyp", "y"], 2, "option 'windows'")
    expect_error(["--ref", "x"], 2, "need --ref FILE and at least one --hyp")


def test_unreadable_file():
    expect_error(["--ref", os.path.join(TMP, "missing"), "--hyp", "/dev/null"], 1,
                 "cannot open")


def test_empty_lines_and_empty_files_are_defined():
    ref = write("empty.ref", "\nThe cat sat\n\n")
    hyp = write("empty.hyp", "nothing\n\n\n")
    d = run_json("--target-lang", "en", "--ref", ref, "--hyp", "h=" + hyp, "--per-segment")
    eq(d["segments"], 3, "three segments")
    s = d["per_segment"][0]["systems"]["h"]
    eq(s["r0"]["score"], None, "nothing to count is null")
    # sacreBLEU >= 2.2: an empty reference is a reference without tokens, BLEU 0.0
    eq(s["bleu"], 0.0, "BLEU against an empty translation is 0.0, as sacreBLEU")
    ref0 = write("zero.ref", "")
    hyp0 = write("zero.hyp", "")
    d = run_json("--ref", ref0, "--hyp", "h=" + hyp0)
    eq(d["segments"], 0, "no segments")
    eq(d["systems"]["h"]["r0"]["score"], None, "empty session is null")


def test_long_line():
    words = " ".join("w%d" % (i % 5000) for i in range(100000))
    ref = write("long.ref", words + "\n")
    hyp = write("long.hyp", words + "\n")
    d = run_json("--target-lang", "en", "--ref", ref, "--hyp", "h=" + hyp)
    tot = d["systems"]["h"]
    eq(tot["r0"]["total"], 5000, "5000 distinct words")
    eq(tot["r0"]["hits"], 5000, "all hit")
    close(tot["ter"], 0.0, 0, "identical: TER 0")


def test_malformed_sgml_and_glossary():
    bad = write("bad.sgm", '<refset>\n<doc docid="d">\n<seg id="1">unterminated\n')
    expect_error(["--sgm-ref", bad, "--sgm-hyp", bad], 1, "bad.sgm:")
    gl = write("bad.csv", 'source,target\n"unterminated,quote\n')
    ref = write("g.ref", "a\n")
    expect_error(["--glossary", gl, "--ref", ref, "--hyp", ref], 1, "bad.csv")


def test_alam2021_needs_sgml():
    ref = write("p.ref", "a\n")
    expect_error(["--profile", "alam2021", "--ref", ref, "--hyp", ref], 2, "needs WMT21 SGML")


def test_help_lists_every_option():
    rc, out, _ = run("--help")
    for opt in ("--tokenizer", "--stopwords", "--windows", "--term-cost", "--k", "--profile",
                "--sgm-hyp", "--per-segment", "--json", "--by-doc", "--glossary", "-i, --input",
                "-m, --metrics", "--confidence", "--confidence-n", "-cc N, -cw N"):
        if opt not in out:
            raise AssertionError("--help lacks " + opt)


def test_defaults_1_keeps_the_old_content_word_rule():
    """A session created before issue 24 (stored with defaults 1 by
    schema/011) keeps the content-word rule its history was counted with:
    NFKC turns U+00B4 in "didn\u00b4t" into a space and a combining mark,
    which the old rule counted as a word and the new one does not."""
    ref = write("acute.en", "I didn\u00b4t see the house\n")
    hyp = write("acute.hyp.en", "I did not see a house\n")
    def total(*extra):
        d = run_json("--target-lang", "en", "--ref", ref, "--hyp", hyp, *extra)
        return next(iter(d["systems"].values()))["r0"]["total"]
    eq(total(), 4, "R0 total under this release's rule")
    eq(total("--defaults", "2"), 4, "R0 total with defaults 2")
    eq(total("--defaults", "1"), 5, "R0 total with defaults 1 (the old rule)")


# ---- issue 29 §3: the researcher's sacreBLEU habits and paper tables ----

PLAIN_REF = "le chat noir dort sur le tapis\nun chien aboie dans la rue\nla maison est grande\n"
PLAIN_HYP = "le chat dort sur le tapis\nun chien aboie la rue\nla maison est petite\n"


def plain_files():
    return write("p.ref.fr", PLAIN_REF), write("p.hyp.fr", PLAIN_HYP)


def run_stdin(data, *args):
    p = subprocess.run([ADAPTMON, "score", *args], input=data.encode(), capture_output=True,
                       timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_hypothesis_on_stdin_and_input_lists():
    """--hyp - and -i - read the hypotheses from stdin (named stdin), as
    sacreBLEU does; -i/--input take several files; two stdins, an empty -i
    are usage errors."""
    ref, hyp = plain_files()
    want = run_json("--target-lang", "fr", "--ref", ref, "--hyp", hyp)["systems"]["p"]
    for opt in (["--hyp", "-"], ["-i", "-"], ["--input", "-"]):
        rc, out, err = run_stdin(PLAIN_HYP, "--target-lang", "fr", "--ref", ref, *opt, "--json")
        eq(rc, 0, "exit of %s: %s" % (opt, err))
        eq(json.loads(out)["systems"]["stdin"], want, "%s scores as the file" % opt)
    d = run_json("--target-lang", "fr", "--ref", ref, "-i", hyp, "b=" + hyp)
    eq(sorted(d["systems"]), ["b", "p"], "-i takes a list of files")
    rc, _, err = run_stdin(PLAIN_HYP, "--ref", ref, "-i", "-", "--hyp", "-")
    eq((rc, "only one input" in err), (2, True), "two stdins: " + err)
    eq(run("--ref", ref, "-i", "--json", check=False)[0], 2, "-i without a file")


def test_ci_and_resamples_alone_are_usage_errors():
    ref, hyp = plain_files()
    for args in (["--ci", "0.9"], ["--n-bootstrap", "50"], ["--confidence-n", "50"],
                 ["--confidence", "--paired-bs"], ["--paired-ar", "--ci", "0.9"],
                 ["--confidence", "--confidence-n", "5", "--n-bootstrap", "5"]):
        rc, _, err = run("--ref", ref, "--hyp", hyp, *args, check=False)
        eq(rc, 2, "exit of %s (%s)" % (args, err.strip()))
    _, _, err = run("--ref", ref, "--hyp", hyp, "--ci", "0.9", check=False)
    eq("--paired-bs or --confidence" in err, True, "--ci alone says what it needs: " + err)


def test_confidence_is_the_paired_bs_interval_of_each_system():
    """sacreBLEU's --confidence resamples each system alone with the seed's
    first draw, the same draw paired-bs uses, so each system's mean and
    half-width equal its paired-bs ones; no baseline, no p-values; --ci
    and --confidence-n apply."""
    args = ["--no-strip-tags", "--sgm-ref", REF, "--sgm-hyp", "Fairseq=" + HYP]
    conf = run_json(*args, "--confidence", "--confidence-n", "200")["significance"]
    paired = run_json(*args, "--sgm-hyp", "Same=" + HYP, "--paired-bs", "--n-bootstrap",
                      "200")["significance"]
    eq((conf["baseline"], conf["n"]), (None, 200), "no baseline, 200 resamples")
    mine = conf["systems"][0]
    theirs = paired["systems"][0]
    for metric in ("BLEU", "chrF2", "TER", "R0", "R1"):
        eq(mine[metric]["p_value"], None, metric + " p without a baseline")
        eq((mine[metric]["mean"], mine[metric]["ci"]),
           (theirs[metric]["mean"], theirs[metric]["ci"]), metric + " mean ± CI as paired-bs")
    narrow = run_json(*args, "--confidence", "--confidence-n", "200", "--ci", "0.5")
    m = narrow["significance"]["systems"][0]["BLEU"]
    if not m["hi"] - m["lo"] < mine["BLEU"]["hi"] - mine["BLEU"]["lo"]:
        raise AssertionError("--ci 0.5 does not narrow the interval: %r" % m)
    _, out, _ = run(*args, "--confidence", "--confidence-n", "200", "--precision", "2")
    if "BLEU (μ ± 95% CI)" not in out or "(p =" in out:
        raise AssertionError("--confidence table:\n" + out)


def test_chrf_short_flags():
    """-cc and -cw are sacreBLEU's --chrf-char-order and --chrf-word-order."""
    ref, hyp = plain_files()
    short = run_json("--ref", ref, "--hyp", hyp, "-cc", "4", "-cw", "1")
    long_ = run_json("--ref", ref, "--hyp", hyp, "--chrf-char-order", "4", "--chrf-word-order", "1")
    eq(short, long_, "-cc/-cw as the long options")
    if "nc:4|nw:1" not in json.dumps(short):
        raise AssertionError("signature lacks nc:4|nw:1")
    default = run_json("--ref", ref, "--hyp", hyp)
    if default["systems"]["p"]["chrf"] == short["systems"]["p"]["chrf"]:
        raise AssertionError("-cc 4 -cw 1 changed nothing")
    eq(run("--ref", ref, "--hyp", hyp, "-cc", "4", "--chrf-char-order", "4", check=False)[0], 2,
       "-cc with --chrf-char-order is one option twice")


def test_metrics_selection():
    """-m/--metrics NAME ... keeps the selected metrics' columns (and their
    significance columns) in the table, markdown, LaTeX, CSV and TSV; --json
    keeps every metric (a machine format: readers pick keys)."""
    ref, hyp = plain_files()
    _, out, _ = run("--ref", ref, "--hyp", hyp, "-m", "bleu", "ter", "--format", "csv")
    eq(out.splitlines()[0], "system,segments,bleu,ter", "CSV header with -m bleu ter")
    _, out, _ = run("--ref", ref, "--hyp", hyp, "--metrics", "recall", "chrf")
    head = [l for l in out.splitlines() if l.startswith("system")][0].split()
    eq(head, ["system", "segments", "R0", "R1", "R0+1", "chrF2"], "table header with -m recall chrf")
    _, out, _ = run("--ref", ref, "--hyp", hyp, "--hyp", "b=" + hyp, "-m", "bleu", "--paired-bs",
                    "--n-bootstrap", "20", "--format", "csv")
    eq(out.splitlines()[0].split(","),
       ["system", "segments", "bleu", "bleu_delta", "bleu_ci_lo", "bleu_ci_hi", "bleu_p",
        "bleu_resampling"], "CSV header with -m bleu --paired-bs")
    d = run_json("--ref", ref, "--hyp", hyp, "-m", "bleu")
    if "r0" not in d["systems"]["p"]:
        raise AssertionError("--json keeps every metric")
    for bad in (["-m", "meteor"], ["-m"], ["-m", "bleu", "--metrics", "ter"]):
        eq(run("--ref", ref, "--hyp", hyp, *bad, check=False)[0], 2, "exit of %s" % bad)


def test_paper_table_compact():
    """--paired-bs in a table: one cell per metric, "μ ± CI (p = P)*" as
    sacreBLEU prints it; p with 4 decimals whatever --precision; identical
    totals (Δ 0, p = 1/(n+1)) marked † with a footnote; the resampling unit
    once as a note; R2 beside R0, R1."""
    _, out, _ = run("--no-strip-tags", "--target-lang", "fr", "--sgm-ref", REF, "--sgm-hyp",
                    "Fairseq=" + HYP, "--sgm-hyp", "Same=" + HYP, "--paired-bs", "--n-bootstrap",
                    "100", "--precision", "2", "--k-max", "2")
    lines = out.splitlines()
    head = [l for l in lines if l.startswith("system")][0]
    for want in ("R0 ", "R1 ", "R2 ", "BLEU (μ ± 95% CI)", "R2 (μ ± 95% CI)"):
        if want not in head:
            raise AssertionError("header lacks %r: %s" % (want, head))
    if "r2" in head or "resampling" in head or "Δ" in head:
        raise AssertionError("header: " + head)
    if "  BLEU  " in head or head.count("BLEU") != 1:
        raise AssertionError("the compact column replaces BLEU's: " + head)
    same = [l for l in lines if l.startswith("Same")][0]
    if not re.search(r"\b45\.34 \(\d+\.\d\d ± \d+\.\d\d\) \(p = 0\.0099\)†", same):
        raise AssertionError("the cell: score (μ ± CI) (p = P)†: " + same)
    if "(p = 0.0099)†" not in same or "0.00)" in same:
        raise AssertionError("identical system's cells: " + same)
    if "resampling: segments; sessions (R0, R1, R2, R0+1)" not in out and \
            "resampling: segments" not in out:
        raise AssertionError("no resampling note:\n" + out)
    if not any(l.startswith("†: Δ 0 with p = 0.0099") for l in lines):
        raise AssertionError("no † footnote:\n" + out)
    _, md, _ = run("--no-strip-tags", "--sgm-ref", REF, "--sgm-hyp", "Fairseq=" + HYP,
                   "--sgm-hyp", "Same=" + HYP, "--paired-ar", "--n-bootstrap", "100",
                   "--format", "markdown", "-m", "bleu")
    if "| BLEU (p) |" not in md or "(p = 0.0099)†" not in md:
        raise AssertionError("markdown with --paired-ar:\n" + md)


def test_json_reals_are_shortest():
    """--json prints every real as the shortest text that reads back (as
    Python's repr), not 17 digits (0.64352818371607512)."""
    out = run("--no-strip-tags", "--sgm-ref", REF, "--sgm-hyp", HYP, "--per-segment",
              "--json")[1]
    toks = re.findall(r'(?<![\w."])-?\d+\.\d+(?![\de])', out)
    if len(toks) < 1000:
        raise AssertionError("only %d reals" % len(toks))
    bad = [t for t in toks if repr(float(t)) != t]
    if bad:
        raise AssertionError("%d reals not shortest, e.g. %s" % (len(bad), bad[:5]))


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))

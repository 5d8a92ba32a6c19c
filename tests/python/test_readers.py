#!/usr/bin/env python3
"""adaptmon's readers (read_plain, read_sgml, read_xliff, read_tmx,
read_glossary) against what `adaptmon score` reads from the same files.

The CLI prints no texts, so each reader is checked through scoring: the
texts it returns, scored as Python lists (corpus_score), give the JSON the
CLI gives on the files (a text read otherwise changes a number), and the
ids it returns are the CLI's per-segment ids. Glossaries and memories go
round the same way: entries written back as a JSON glossary, counts as a
"count word" list, score as the file itself does. Refusals carry the CLI's
message and status (tests/data/real: CAT tools' own files). Ends with
"N passed, N failed".
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
from harness import ADAPTMON, DATA, DEV, ROOT, check, eq, run_tests  # noqa: E402

PYDIR = os.path.join(ROOT, "python")
TD = os.path.join(ROOT, "tests", "data")
TEXT = os.path.join(DEV, "text")
SGM_SRC = os.path.join(DEV, "dev.en-fr.en.sgm")
SGM_REF = os.path.join(DEV, "dev.en-fr.fr.sgm")
SGM_HYP = os.path.join(DEV, "en-fr.dev.txt.truecased.sgm")
TICO_CSV = os.path.join(DATA, "glossaries", "tico19", "f_en-fr_XX.csv")

am = None  # the adaptmon module, imported by setup()


def setup():
    global am
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=PYDIR,
                   check=True, stdout=subprocess.DEVNULL)
    sys.path.insert(0, PYDIR)
    import adaptmon
    am = adaptmon


def cli(*args):
    """`adaptmon score ARGS --json`: (status, JSON or None, stderr)."""
    p = subprocess.run([ADAPTMON, "score", *args, "--json"], capture_output=True, text=True,
                       timeout=300)
    return p.returncode, json.loads(p.stdout) if p.returncode == 0 else None, p.stderr


def cli_message(stderr):
    """The CLI's stderr as AdaptmonError carries it (prefix removed)."""
    p = "adaptmon score: "
    return "\n".join(ln[len(p):] if ln.startswith(p) else ln
                     for ln in stderr.splitlines() if ln.strip())


def systems_json(res):
    return {k: v.raw for k, v in res.systems.items()}


def score_input(x, **opts):
    """corpus_score of an Input's texts (one session)."""
    segs = x.segments
    return am.corpus_score({k: [s.hypotheses[k] for s in segs] for k in x.systems},
                           [s.target for s in segs], [s.source or "" for s in segs],
                           per_segment=True, **opts)


def test_read_plain_equals_cli():
    """TICO-19's plain files: the lists read score as the files do; line
    ends as the CLI reads them (CRLF, no final newline, blank lines)."""
    names = {"src": "source.en", "ref": "ref.fr", "hyp": "baseline.fr"}
    got = {k: am.read_plain(os.path.join(TEXT, v)) for k, v in names.items()}
    eq(len(got["ref"]), 971, "segments")
    res = am.corpus_score({"baseline": got["hyp"]}, got["ref"], got["src"], target_lang="fr")
    rc, want, err = cli("--target-lang", "fr", "--src", os.path.join(TEXT, names["src"]),
                        "--ref", os.path.join(TEXT, names["ref"]),
                        "--hyp", "baseline=" + os.path.join(TEXT, names["hyp"]))
    eq(rc, 0, err)
    eq(systems_json(res), want["systems"], "scores of the lists read")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "f")
        with open(p, "wb") as f:
            f.write("un\r\ndeux\n\ntrois é".encode())
        eq(am.read_plain(p), ["un", "deux", "", "trois é"], "line ends")
        with open(p, "wb") as f:
            f.write(b"ok\nbad \xff\n")
        rc, _, err = cli("--ref", p, "--hyp", p)
        try:
            am.read_plain(p)
            check(False, "invalid UTF-8 accepted")
        except am.AdaptmonError as e:
            eq(str(e), cli_message(err), "the CLI's message")
            eq(e.status, rc, "the CLI's status")


def test_read_sgml_equals_cli():
    """TICO-19's WMT SGML: segments in reference order with the CLI's ids
    and docids, texts that score as the files do."""
    x = am.read_sgml(SGM_REF, SGM_SRC, {"fairseq": SGM_HYP})
    eq(x.systems, ["fairseq"], "systems")
    rc, want, err = cli("--target-lang", "fr", "--per-segment", "--sgm-ref", SGM_REF,
                        "--sgm-src", SGM_SRC, "--sgm-hyp", "fairseq=" + SGM_HYP)
    eq(rc, 0, err)
    eq([s.id for s in x.segments], [p["id"] for p in want["per_segment"]], "ids")
    eq([s.doc for s in x.segments], [p["doc"] for p in want["per_segment"]], "docids")
    # the reference's <term> tags are term annotations, which corpus_score
    # has no way to take: the scores they do not touch are equal, and the
    # tags read are the instances the CLI scored
    got = systems_json(score_input(x, target_lang="fr"))["fairseq"]
    ref = dict(want["systems"]["fairseq"])
    for key in ("terms", "one_minus_term"):
        got.pop(key), ref.pop(key)
    eq(got, ref, "scores")
    tags = [t for s in x.segments for t in s.terms if t["target"] and t["tok_count"]]
    eq(len(tags), want["systems"]["fairseq"]["terms"]["instances"], "term tags read")
    alone = am.read_sgml(SGM_REF)
    eq([s.target for s in alone.segments], [s.target for s in x.segments], "reference alone")
    eq(alone.systems, [], "no system")


def test_read_xliff_equals_cli():
    """Every XLIFF of tests/data/xliff (OmegaT, Phrase 1 and 2, memoQ,
    Trados): the units the CLI scores, with its ids, languages and skip
    counts; texts that score as the file does."""
    for name in sorted(os.listdir(os.path.join(TD, "xliff"))):
        if name.split(".")[-1] not in ("xlf", "mxliff", "mqxliff", "sdlxliff"):
            continue
        path = os.path.join(TD, "xliff", name)
        x = am.read_xliff(path)
        rc, want, err = cli("--per-segment", "--xliff", path)
        eq(rc, 0, name + ": " + err)
        eq([s.id for s in x.segments], [p["id"] for p in want["per_segment"]], name + " ids")
        eq(x.skipped, want.get("skipped"), name + " skipped")
        eq(sorted(x.systems), sorted(want["systems"]), name + " systems")
        res = score_input(x, source_lang=x.source_lang, target_lang=x.target_lang)
        eq(systems_json(res), want["systems"], name + " scores")
        eq(res.signature, want["signature"], name + " signature (languages)")


def test_read_xliff_real_files_as_cli():
    """CAT tools' own XLIFF files (tests/data/real): what the CLI scores is
    read, what it refuses raises its message and status; the two-file
    project (--xliff-mt) reads the MT from the second file."""
    real = os.path.join(TD, "real")
    n = 0
    for sub in sorted(os.listdir(real)):
        d = os.path.join(real, sub)
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if f.split(".")[-1] not in ("xlf", "xliff"):
                continue
            path = os.path.join(d, f)
            rc, want, err = cli("--xliff", path)
            try:
                x = am.read_xliff(path)
                eq(rc, 0, "%s: read but the CLI refuses: %s" % (f, err))
                eq(len(x.segments), want["segments"], f)
            except am.AdaptmonError as e:
                check(rc != 0, "%s: refused but the CLI reads it: %s" % (f, e))
                eq(str(e), cli_message(err), f + " message")
                eq(e.status, rc, f + " status")
            n += 1
    check(n >= 25, "real files read: %d" % n)
    tt = os.path.join(real, "translate-toolkit")
    final, mt = os.path.join(tt, "states_yes.xlf"), os.path.join(tt, "states_no.xlf")
    x = am.read_xliff(final, mt)
    rc, want, err = cli("--xliff", final, "--xliff-mt", mt)
    eq(rc, 0, err)
    eq(systems_json(score_input(x, source_lang=x.source_lang, target_lang=x.target_lang)),
       want["systems"], "two-file scores")


def _json_glossary(entries, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump([{"source": e.source, "targets": e.targets, "case_sensitive": e.case_sensitive,
                    "forbidden": e.forbidden, "id": e.id} for e in entries], f)


def test_read_glossary_round_trip():
    """TICO-19's CSV and a TBX termbase: the entries read, written back as
    a JSON glossary, find the same terms in TICO-19 as the file itself;
    a TBX without the target language raises the CLI's message."""
    segs = {k: am.read_plain(os.path.join(TEXT, v))[:300]
            for k, v in {"src": "source.en", "ref": "ref.fr", "hyp": "baseline.fr"}.items()}
    cases = [(TICO_CSV, {}), (os.path.join(TD, "glossary", "covid-en-fr.tbx"),
                              {"source_lang": "en", "target_lang": "fr"})]
    with tempfile.TemporaryDirectory() as d:
        for path, langs in cases:
            entries = am.read_glossary(path, **langs)
            check(len(entries) > 5, "%s: %d entries" % (path, len(entries)))
            back = os.path.join(d, "g.json")
            _json_glossary(entries, back)
            want = am.corpus_score(segs["hyp"], segs["ref"], segs["src"], target_lang="fr",
                                   source_lang="en", glossary=path)
            got = am.corpus_score(segs["hyp"], segs["ref"], segs["src"], target_lang="fr",
                                  source_lang="en", glossary=back)
            check(want.systems["hyp"].terms["instances"] > 0, path + ": terms found")
            eq(got.systems["hyp"].terms, want.systems["hyp"].terms, path + " terms")
    tbx = os.path.join(TD, "real", "okapi", "test01.tbx")
    eq(len(am.read_glossary(tbx, source_lang="en", target_lang="hu")) > 0, True, "hu side")
    rc, _, err = cli("--ref", TICO_CSV, "--hyp", TICO_CSV, "--source-lang", "en",
                     "--target-lang", "tr", "--glossary", tbx)
    try:
        am.read_glossary(tbx, source_lang="en", target_lang="tr")
        check(False, "a TBX without tr accepted")
    except am.AdaptmonError as e:
        eq((str(e), e.status), (cli_message(err), rc), "the CLI's refusal")


def test_read_tmx_round_trip():
    """A TMX memory's word counts (read_tmx), written as a "count word"
    list, give the novel-word recall the memory gives as --background; a
    UTF-16 memory of the LISA kit reads; one without the language raises
    the CLI's message."""
    tmx = os.path.join(TD, "xliff", "memory.tmx")
    counts = am.read_tmx(tmx, "fr", "en")
    check(len(counts) > 50 and all(isinstance(v, int) and v > 0 for v in counts.values()),
          "counts: %d words" % len(counts))
    segs = {k: am.read_plain(os.path.join(TEXT, v))[:200]
            for k, v in {"src": "source.en", "ref": "ref.fr", "hyp": "baseline.fr"}.items()}
    with tempfile.TemporaryDirectory() as d:
        lst = os.path.join(d, "bg.txt")
        with open(lst, "w", encoding="utf-8") as f:
            f.writelines("%d %s\n" % (n, w) for w, n in counts.items())
        opts = dict(target_lang="fr", source_lang="en", rare_threshold=1)
        want = am.corpus_score(segs["hyp"], segs["ref"], segs["src"], background=tmx, **opts)
        got = am.corpus_score(segs["hyp"], segs["ref"], segs["src"], background=lst, **opts)
        eq(systems_json(got), systems_json(want), "novel-word recall")
    kit = os.path.join(TD, "real", "okapi")
    check(len(am.read_tmx(os.path.join(kit, "ImportTest2A.tmx"), "fr")) > 0, "UTF-16 memory")
    bad = os.path.join(kit, "ImportTest1D.tmx")
    rc, _, err = cli("--ref", TICO_CSV, "--hyp", TICO_CSV, "--target-lang", "fr",
                     "--background", bad)
    try:
        am.read_tmx(bad, "fr")
        check(False, "a memory without fr accepted")
    except am.AdaptmonError as e:
        eq((str(e), e.status), (cli_message(err), rc), "the CLI's refusal")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup=setup))

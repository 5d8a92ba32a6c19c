#!/usr/bin/env python3
"""Issue 24 §1, §3: languages and tokenizer names never silently differ.

* `score --background x.tmx` checks the memory against --source-lang: a
  header srclang of another language, or <tuv>s none of which is in the
  source language, exits 2 naming both (real file: the LISA TMX compliance
  kit's ImportTest1B.tmx from Okapi, tests/data/real/okapi, en-US -> fr-CA).
* A ja run's signature names MeCab's version as sacreBLEU does
  (tok:ja-mecab-0.996-IPA), and a live ja session's signature (session
  echo, POST answer, GET metrics) is the same string as `score`'s with the
  same options.

Prints "ok NAME" / "FAILED NAME" and ends with "N passed, N failed".
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from harness import ADAPTMON, ROOT, base, check, eq, run_tests, serve, shutdown  # noqa: E402

KIT = os.path.join(ROOT, "tests", "data", "real", "okapi", "ImportTest1B.tmx")
TMP = tempfile.mkdtemp(prefix="adaptmon-langgaps-")


def write(name, text):
    p = os.path.join(TMP, name)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    return p


def score(*args):
    return subprocess.run([ADAPTMON, "score"] + list(args), capture_output=True, text=True,
                          timeout=120)


REF = write("ref.txt", "Texte du segment\n")
HYP = write("hyp.txt", "Texte de segment\n")


def test_tmx_background_source_lang_checked():
    r = score("--source-lang", "de", "--target-lang", "fr-CA", "--ref", REF, "--hyp", HYP,
              "--background", KIT)
    eq(r.returncode, 2, "exit status of a de run with an en-US memory (stderr %r)" % r.stderr)
    check("srclang en-us" in r.stderr and "source language is de" in r.stderr, r.stderr)
    r = score("--source-lang", "en", "--target-lang", "fr-CA", "--ref", REF, "--hyp", HYP,
              "--background", KIT, "--json")
    eq(r.returncode, 0, "en run with the en-US memory (stderr %r)" % r.stderr)
    # no header srclang: the <tuv> languages must hold the source language
    tmx = write("nosrc.tmx", '<?xml version="1.0"?><tmx version="1.4"><header/><body><tu>'
                '<tuv xml:lang="en"><seg>a cat</seg></tuv><tuv xml:lang="fr"><seg>un chat</seg>'
                '</tuv></tu></body></tmx>')
    r = score("--source-lang", "es", "--target-lang", "fr", "--ref", REF, "--hyp", HYP,
              "--background", tmx)
    eq(r.returncode, 2, "es run with an en-fr memory (stderr %r)" % r.stderr)
    check("source language es" in r.stderr and "en, fr" in r.stderr, r.stderr)
    # without --target-lang the side counted is the one that is not the source
    r = score("--source-lang", "en", "--ref", REF, "--hyp", HYP, "--background", tmx)
    eq(r.returncode, 0, "side picked by --source-lang (stderr %r)" % r.stderr)


JA_REF = "\u79c1\u306f\u5bff\u53f8\u3092\u98df\u3079\u307e\u3057\u305f\u3002"
JA_HYP = "\u79c1\u306f\u5bff\u53f8\u3092\u98df\u3079\u305f\u3002"


def test_ja_signature_names_mecab_version_live_and_score():
    ref, hyp = write("ref.ja", JA_REF + "\n"), write("hyp.ja", JA_HYP + "\n")
    # a live ja session runs TER normalized with Asian support: the same flags here
    r = score("--source-lang", "en", "--target-lang", "ja", "--ter-normalized",
              "--ter-asian-support", "--ref", ref, "--hyp", hyp, "--json")
    eq(r.returncode, 0, "score (stderr %r)" % r.stderr)
    d = json.loads(r.stdout)
    tok = re.search(r"\btok:(ja-mecab-[^|]+)", d["sacrebleu"]["bleu"])
    check(tok is not None, "sacreBLEU signature names MeCab's version: " + d["sacrebleu"]["bleu"])
    sig = d["signature"]
    check("|tok:%s|" % tok.group(1) in sig and "|bleu:%s" % tok.group(1) in sig,
          "score's signature names %s: %s" % (tok.group(1), sig))
    srv, cli = serve()
    try:
        s = cli.create_session(id="ja", source_lang="en", target_lang="ja")
        eq(s["signature"], sig, "session echo signature = score's")
        a = cli.post(base("ja") + "/segments", {"id": "1", "source": "I ate sushi.",
                                                 "translation": JA_REF,
                                                 "hypotheses": {"h": JA_HYP}})
        eq(a.status, 201, "POST")
        eq(a.json()["signature"], sig, "POST answer signature = score's")
        eq(cli.jget(base("ja") + "/metrics")["signature"], sig, "metrics signature = score's")
        eq(cli.jget(base("ja"))["signature"], sig, "GET session signature = score's")
    finally:
        shutdown(srv, cli)


if __name__ == "__main__":
    sys.exit(run_tests(globals()))

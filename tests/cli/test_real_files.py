#!/usr/bin/env python3
"""Real CAT-tool and filter-library files (tests/data/real/, see its README)
through `adaptmon score`: every file is either scored (N segments) or
refused with its reason, and this table records which (issue 24: a real
file must never give a silent empty or wrong result). XLIFF files go
through --xliff (one pair through --xliff-mt), TMX memories through
--background with an en->fr XLIFF, TBX termbases through --glossary.
Ends with "N passed, N failed"."""
import json
import os
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
A = os.environ.get("ADAPTMON", os.path.join(ROOT, "adaptmon"))
R = os.path.join(ROOT, "tests", "data", "real")
FR = os.path.join(ROOT, "tests", "data", "xliff", "omegat.xlf")

# XLIFF: path -> ("scored", segments) or ("refused", text on stderr)
NOMT = "no MT candidate: the unit has no alt-trans"
XLIFF = {
    "okapi/BinUnitTest01.xlf": ("refused", "3 skipped: 1 translate=no; 2 no target"),
    "okapi/JMP-11-Test01.xlf": ("refused", "9 skipped: 9 unconfirmed"),
    "okapi/Manual-12-AltTrans.xlf": ("refused", "1 unconfirmed; 1 " + NOMT),
    "okapi/NSTest01.xlf": ("refused", "1 translate=no; 1 no target"),
    "okapi/OnTramTest01.xlf": ("refused", "88 no target"),
    "okapi/PAS-10-Test01.xlf": ("refused", "158 no target"),
    "okapi/RB-11-Test01.xlf": ("refused", "10 no target; 1 " + NOMT),
    "okapi/RB-12-Test02.xlf": ("refused", "7 unconfirmed; 4 no target"),
    # Swordfish: TM matches in alt-trans (match-quality, no MT origin)
    "okapi/SF-12-Test02.xlf": ("refused", "90 no MT candidate: alt-trans not marked as MT (a TM"),
    # Swordfish, declared windows-1252 (was refused as invalid UTF-8)
    "okapi/SF-12-Test03.xlf": ("refused", "944 skipped: 1 unconfirmed; 943 no target"),
    "okapi/TS09-12-Test01.xlf": ("refused", "22 translate=no; 22 no target; 1 " + NOMT),
    "okapi/Typo3Draft.xlf": ("refused", "4 unconfirmed; 2 no target"),
    "okapi/Xslt-Test01.xlf": ("refused", "6 unconfirmed"),
    "okapi/lqiTest.xlf": ("refused", "2 no target"),
    "omegat/en-ca.xlf": ("refused", "3 unconfirmed; 1 translate=no"),
    "omegat/ex.14.5.xlf": ("refused", "2 no target"),
    "omegat/ex.9.5.xlf": ("refused", "6 no target; 1 unconfirmed; 1 translate=no"),
    "omegat/file-XLIFFFilter-statcount.xlf": ("refused", ":5: <trans-unit> without an id"),
    "omegat/file-XLIFFFilter.xlf": ("refused", ":5: <trans-unit> without an id"),
    "omegat/file-XLIFFFilter1-multiple-file-tag.xlf": ("refused", "2 no target"),
    "omegat/file-xliff-RFE1506-translated-expectation.xliff": ("refused", "4 " + NOMT),
    "translate-toolkit/states_no.xlf": ("refused", "6 unconfirmed; 2 " + NOMT),
    "translate-toolkit/states_yes.xlf": ("refused", "8 " + NOMT),
    "translate-toolkit/test_2-test_odf2xliff-reference.xlf": ("refused", "10 no target"),
    "translate-toolkit/test_inline-test_odf2xliff_inline-reference.xlf": ("refused", "4 no target"),
}
# two-file: (final, MT file) -> expectation
TWO = {("translate-toolkit/states_yes.xlf", "translate-toolkit/states_no.xlf"): ("scored", 8)}
# TMX (LISA compliance kit, some in UTF-16) as --background of an en->fr run
NOFR = "the memory has no segment in fr-FR"
TMX = {
    "okapi/ExportTest1A.tmx": ("read",), "okapi/ExportTest1B.tmx": ("read",),
    "okapi/ExportTest2A.tmx": ("read",), "okapi/ImportTest1A.tmx": ("read",),  # UTF-16
    "okapi/ImportTest1B.tmx": ("read",), "okapi/ImportTest1C.tmx": ("read",),
    "okapi/ImportTest1D.tmx": ("refused", NOFR + " (its languages: en-us)"),
    "okapi/ImportTest1H.tmx": ("refused", NOFR + " (its languages: en-us)"),
    "okapi/ImportTest1I.tmx": ("refused", NOFR + " (its languages: en-us, ja-jp)"),
    "okapi/ImportTest1L.tmx": ("read",), "okapi/ImportTest2A.tmx": ("read",),  # UTF-16
    "okapi/ImportTest2B.tmx": ("read",),  # UTF-16
}
# TBX as --glossary of an en->LANG run: (path, LANG) -> expectation
TBX = {
    ("okapi/test01.tbx", "hu"): ("read",),
    ("okapi/test01.tbx", "tr"): ("refused", "no term in the target language tr (its languages: "
                                            "en, hu)"),
    ("okapi/test02_win1254.tbx", "tr"): ("read",),  # declared windows-1254
    ("okapi/test02_win1254.tbx", "hu"): ("refused", "no term in the target language hu"),
}


def score(*args):
    return subprocess.run([A, "score", "--json"] + list(args), capture_output=True, text=True)


def expect(what, r, exp):
    if exp[0] == "scored":
        assert r.returncode == 0, (what, r.stderr)
        got = json.loads(r.stdout)["segments"]
        assert got == exp[1], (what, got, exp)
    elif exp[0] == "read":
        assert r.returncode == 0, (what, r.stderr)
    else:
        assert r.returncode != 0, (what, "exit 0 but expected a refusal")
        assert exp[1] in r.stderr, (what, r.stderr, exp[1])
        assert "invalid UTF-8" not in r.stderr, (what, r.stderr)


def test_every_file_is_listed():
    """No file of tests/data/real goes untested."""
    listed = set(XLIFF) | set(TMX) | {p for p, _ in TBX}
    for sub in sorted(os.listdir(R)):
        d = os.path.join(R, sub)
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if f.split(".")[-1] in ("xlf", "xliff", "tmx", "tbx"):
                assert "%s/%s" % (sub, f) in listed, "%s/%s has no expectation" % (sub, f)


def test_xliff_files():
    for p, exp in sorted(XLIFF.items()):
        expect(p, score("--xliff", os.path.join(R, p)), exp)


def test_two_file_scoring():
    for (final, mt), exp in TWO.items():
        expect(final, score("--xliff-mt", os.path.join(R, mt), "--xliff", os.path.join(R, final)),
               exp)


def test_tmx_backgrounds():
    for p, exp in sorted(TMX.items()):
        r = score("--xliff", FR, "--background", os.path.join(R, p))
        expect(p, r, exp)
        assert exp[0] != "refused" or r.returncode == 2, (p, r.returncode)  # a language error


def test_tbx_glossaries():
    with tempfile.TemporaryDirectory() as d:
        src, ref = os.path.join(d, "src"), os.path.join(d, "ref")
        with open(src, "w") as f:
            f.write("the cat\n")
        with open(ref, "w") as f:
            f.write("x\n")
        for (p, lang), exp in sorted(TBX.items()):
            r = score("--src", src, "--ref", ref, "--hyp", ref, "--source-lang", "en",
                      "--target-lang", lang, "--glossary", os.path.join(R, p))
            expect((p, lang), r, exp)
            assert exp[0] != "refused" or r.returncode == 2, (p, lang, r.returncode)


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

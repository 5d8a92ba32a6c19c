#!/usr/bin/env python3
"""Exports that their readers can always read (issue 25 §6).

  * TMX: a session whose segments hold every character XML 1.0 does not
    allow (U+0001-U+001F but TAB/LF/CR, U+FFFE, U+FFFF; U+000B is the soft
    line break of Word and Trados content) exports as well-formed XML —
    checked with Python's expat and with libxml2 (xmllint) — and each such
    character is kept as <ph type="x-adaptmon-char">U+XXXX</ph>, from which
    the exact segment text is rebuilt; CR survives parsing (a reference).
  * CSV: cells starting with =, +, -, @, TAB or CR (a spreadsheet would
    evaluate them) are quoted and prefixed with ' (OWASP "CSV Injection");
    other cells are unchanged.

Prints "ok NAME" / "FAILED NAME" and "N passed, N failed". Python standard
library (and xmllint when installed).
"""
import csv
import io
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, eq, expect_status, run_tests, serve, shutdown  # noqa: E402

S = None
C = None
BAD = [chr(c) for c in range(1, 32) if c not in (9, 10, 13)] + ["\ufffe", "\uffff"]


def setup():
    global S, C
    S, C = serve()


def teardown():
    shutdown(S, C)


def seg_text(seg):
    """The text of a TMX <seg>, with each x-adaptmon-char placeholder
    turned back into its character."""
    out = [seg.text or ""]
    for ph in seg:
        eq(ph.tag, "ph", "inline element")
        eq(ph.get("type"), "x-adaptmon-char", "placeholder type")
        out.append(chr(int(ph.text[2:], 16)))
        out.append(ph.tail or "")
    return "".join(out)


def test_tmx_export_is_well_formed_for_every_character_xml_refuses():
    C.create_session(id="ctl")
    texts = {}
    for i, ch in enumerate(BAD + ["\r"]):
        src = "line one%sline two & <b> \"%d\"" % (ch, i)
        tr = "ligne un%sligne deux %d" % (ch, i)
        r = C.post("/v1/sessions/ctl/segments",
                   {"id": "s%d" % i, "source": src, "hypothesis": tr, "translation": tr,
                    "translator": "ann"})
        expect_status(r, 201, "POST a segment holding U+%04X" % ord(ch))
        texts["s%d" % i] = (src, tr)
    r = C.get("/v1/sessions/ctl/export?format=tmx")
    expect_status(r, 200, "TMX export")
    body = r.body
    root = ET.fromstring(body)  # expat: raises on ill-formed XML
    tus = root.findall("./body/tu")
    eq(len(tus), len(texts), "translation units")
    for tu in tus:
        src, tr = texts[tu.get("tuid")]
        segs = [seg_text(t.find("seg")) for t in tu.findall("tuv")]
        eq(segs, [src, tr], "segment text rebuilt from the export")
    if shutil.which("xmllint"):
        p = subprocess.run(["xmllint", "--noout", "-"], input=body, capture_output=True)
        eq(p.returncode, 0, "libxml2 parses the export: %s" % p.stderr[:500])


def test_csv_export_neutralises_cells_a_spreadsheet_would_evaluate():
    C.create_session(id="csvi")
    cells = ["=HYPERLINK(\"http://x.test\",\"y\")", "+1+2", "-2+3", "@SUM(A1)", "\tlead",
             "\rlead", "plain text", "a=b"]
    for i, t in enumerate(cells):
        r = C.post("/v1/sessions/csvi/segments",
                   {"id": "c%d" % i, "source": t, "hypothesis": t, "translation": t})
        expect_status(r, 201, "POST %r" % t)
    r = C.get("/v1/sessions/csvi/export?format=csv")
    expect_status(r, 200, "CSV export")
    rows = list(csv.DictReader(io.StringIO(r.body.decode("utf-8"), newline="")))
    eq(len(rows), len(cells), "rows")
    for row, t in zip(rows, cells):
        want = "'" + t if t[0] in "=+-@\t\r" else t
        for col in ("source", "hypothesis", "translation"):
            eq(row[col], want, "CSV %s cell for %r" % (col, t))
    check("'=HYPERLINK" in r.body.decode("utf-8"), "the formula is written as text")


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))

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
from harness import (Server, check, db_restyle_json, eq, expect_status, run_tests, serve,  # noqa: E402
                     shutdown)

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


def test_exports_read_from_the_text_equal_the_parsed_rows():
    """CSV and TMX rows are written from the compact stored text without
    parsing it (api_export.c am_exp_row_text); text that is not compact is
    parsed with jansson as before. The same session stored both ways (the
    requests and results re-indented in SQL while the server is stopped)
    exports the same bytes: escapes, non-ASCII and control characters in
    the text, a translator, a system missing from a segment, a single
    "hypothesis"."""
    srv = Server()
    c = srv.client()
    c.create_session(id="tx", source_lang="en", target_lang="fr")
    texts = ["quote \" back\\slash\ttab\nnew line", "caf\u00e9 \u2014 \U0001F600 " + BAD[0] + BAD[10],
             "=1+2, \"x\"", "plain"]
    for i, t in enumerate(texts):
        hyps = {"sys.1": t + " h", "sys-2_b": "b " + t}
        if i == 2:
            del hyps["sys-2_b"]
        body = {"id": "e%d" % i, "source": t, "translation": "tr " + t, "hypotheses": hyps}
        if i % 2:
            body["translator"] = "ann.e-%d" % i
        expect_status(c.post("/v1/sessions/tx/segments", body), 201, "POST e%d" % i)
    c.create_session(id="one", source_lang="en", target_lang="de")
    expect_status(c.post("/v1/sessions/one/segments",
                         {"id": "o", "source": "a < b", "hypothesis": "h & i",
                          "translation": "t\u00fc"}), 201, "POST o")
    urls = ["/v1/sessions/%s/export?format=%s" % (sid, f) for sid in ("tx", "one")
            for f in ("csv", "tmx")]
    compact = {u: c.get(u) for u in urls}
    for u, r in compact.items():
        expect_status(r, 200, u)
    c.close()
    eq(srv.stop(), 0, "exit status")
    n = sum(db_restyle_json(srv, table, cols) for table, cols in
            (("segments", ("request", "result")), ("segment_results", ("result",))))
    check(n >= 10, "texts rewritten: %d" % n)
    srv2 = Server(db=srv.db)
    c = srv2.client()
    try:
        for u in urls:
            r = c.get(u)
            expect_status(r, 200, u + " (parsed)")
            eq(r.body.decode("utf-8"), compact[u].body.decode("utf-8"), u + ": text == parsed")
        body = compact[urls[0]].body.decode("utf-8")
        check("sys.1" in body and "sys-2_b" in body, "both systems exported")
    finally:
        c.close()
        eq(srv2.stop(), 0, "exit status")


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))

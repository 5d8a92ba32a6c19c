#!/usr/bin/env python3
"""adaptmon score --xliff: every CAT-tool file of tests/data/xliff scores
exactly like the same confirmed segments given as plain-text files; two
files are two sessions; a TMX --background equals its count list; hostile
XML exits 1 with a message. Ends with "N passed, N failed"."""
import json
import os
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
A = os.environ.get("ADAPTMON", os.path.join(ROOT, "adaptmon"))
X = os.path.join(ROOT, "tests", "data", "xliff")
FILES = ["trados.sdlxliff", "memoq.mqxliff", "phrase.mxliff", "phrase-2.xlf", "omegat.xlf"]


def score(*args):
    r = subprocess.run([A, "score", "--json"] + list(args), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def plain_files(d):
    with open(os.path.join(X, "expected.json"), encoding="utf-8") as f:
        e = json.load(f)
    S = e["segments"]

    def w(name, lines):
        p = os.path.join(d, name)
        with open(p, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return p
    # the XLIFF files declare en -> fr, which score takes (issue 24)
    args = ["--source-lang", "en", "--target-lang", "fr",
            "--ref", w("ref", [s["translation"] for s in S]),
            "--src", w("src", [s["source"] for s in S])]
    for k in e["systems"]:
        args += ["--hyp", "%s=%s" % (k, w(k, [s["hypotheses"][k] for s in S]))]
    return args, len(S)


def test_xliff_equals_plain():
    with tempfile.TemporaryDirectory() as d:
        args, n = plain_files(d)
        base = score(*args)
        for f in FILES:
            got = score("--xliff", os.path.join(X, f))
            assert got["segments"] == n, (f, got["segments"])
            assert got["systems"] == base["systems"], f


def test_two_files_two_sessions():
    got = score("--xliff", os.path.join(X, FILES[0]), "--xliff", os.path.join(X, FILES[1]))
    assert got["sessions"] == 2, got["sessions"]


def test_tmx_background():
    with tempfile.TemporaryDirectory() as d:
        tmx = os.path.join(d, "m.tmx")
        with open(tmx, "w") as f:
            f.write("<tmx version='1.4'><header srclang='en'/><body><tu>"
                    "<tuv xml:lang='en'><seg>x</seg></tuv>"
                    "<tuv xml:lang='fr'><seg>et vous symptômes symptômes</seg></tuv>"
                    "</tu></body></tmx>")
        cnt = os.path.join(d, "c.txt")
        with open(cnt, "w") as f:
            f.write("1 et\n1 vous\n2 symptômes\n")
        x = os.path.join(X, "omegat.xlf")
        a = score("--xliff", x, "--background", tmx, "--rare-threshold", "1")
        b = score("--xliff", x, "--background", cnt, "--rare-threshold", "1")
        c = score("--xliff", x)
        assert a["systems"] == b["systems"]
        assert a["systems"] != c["systems"]


def test_hostile_exits_1():
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "bl.xlf")
        with open(p, "w") as f:
            f.write("<!DOCTYPE x [<!ENTITY a 'aa'><!ENTITY b '&a;&a;'>]><xliff version='1.2'>"
                    "<file><body><trans-unit id='1'><source>&b;</source></trans-unit>"
                    "</body></file></xliff>")
        r = subprocess.run([A, "score", "--xliff", p], capture_output=True, text=True)
        assert r.returncode == 1 and "entity" in r.stderr, (r.returncode, r.stderr)
        r = subprocess.run([A, "score", "--xliff", p, "--ref", p], capture_output=True, text=True)
        assert r.returncode == 2, r.returncode


# ---- issue 24 ----

def run(*args):
    return subprocess.run([A, "score"] + list(args), capture_output=True, text=True)


def xlf(units, sl="en", tl="fr", ns=""):
    return ('<?xml version="1.0"?><xliff version="1.2" '
            'xmlns="urn:oasis:names:tc:xliff:document:1.2"%s><file source-language="%s" '
            'target-language="%s"><body>%s</body></file></xliff>' % (ns, sl, tl, "".join(units)))


def test_encodings_equal_utf8():
    """windows-1252 and UTF-16 XLIFF (declared / BOM) score as their UTF-8 twin."""
    src = os.path.join(X, "omegat.xlf")
    text = open(src, encoding="utf-8").read()
    with tempfile.TemporaryDirectory() as d:
        cp, u16 = os.path.join(d, "cp.xlf"), os.path.join(d, "u16.xlf")
        with open(cp, "wb") as f:
            f.write(text.replace('encoding="UTF-8"', 'encoding="windows-1252"')
                    .encode("cp1252", errors="xmlcharrefreplace"))
        with open(u16, "wb") as f:
            f.write(b"\xfe\xff" + text.replace('encoding="UTF-8"', 'encoding="UTF-16"')
                    .encode("utf-16-be"))
        base = score("--xliff", src)
        assert score("--xliff", cp)["systems"] == base["systems"]
        assert score("--xliff", u16)["systems"] == base["systems"]


def test_plain_text_encoding_message():
    with tempfile.TemporaryDirectory() as d:
        ref, hyp = os.path.join(d, "ref.txt"), os.path.join(d, "hyp.txt")
        with open(ref, "wb") as f:
            f.write("caf\u00e9 \u201cok\u201d\n".encode("cp1252"))
        with open(hyp, "w") as f:
            f.write("cafe\n")
        r = run("--ref", ref, "--hyp", hyp, "--target-lang", "fr")
        assert r.returncode == 1, r.returncode
        assert "windows-1252" in r.stderr and "iconv -f WINDOWS-1252" in r.stderr, r.stderr
        with open(ref, "wb") as f:
            f.write("\ufeffcaf\u00e9\n".encode("utf-16-le"))
        r = run("--ref", ref, "--hyp", hyp, "--target-lang", "fr")
        assert r.returncode == 1 and "UTF-16LE" in r.stderr and "iconv" in r.stderr, r.stderr


def test_languages_from_the_file():
    """The file's target-language picks the stopwords as --target-lang would;
    a mismatch with the command line exits 2 naming both."""
    x = os.path.join(X, "omegat.xlf")
    a = score("--xliff", x)
    b = score("--xliff", x, "--target-lang", "fr", "--source-lang", "en")
    assert a["systems"] == b["systems"]
    assert "sw:snowball" in a["signature"], a["signature"]  # was sw:none
    r = run("--xliff", x, "--target-lang", "de")
    assert r.returncode == 2, r.returncode
    assert 'target-language="FR-FR"' in r.stderr and "--target-lang de" in r.stderr, r.stderr
    with tempfile.TemporaryDirectory() as d:
        de = os.path.join(d, "de.xlf")
        with open(de, "w") as f:
            f.write(xlf(['<trans-unit id="1"><source>a</source><target state="final">b</target>'
                         '<alt-trans origin="mt"><target>b</target></alt-trans></trans-unit>'],
                        tl="de"))
        r = run("--xliff", x, "--xliff", de)
        assert r.returncode == 2 and de in r.stderr and x in r.stderr, r.stderr


def test_alt_trans_source_language_and_skip_counts():
    units = [
        '<trans-unit id="a"><source>the cat</source><target state="final">le chat</target>'
        '<alt-trans origin="mt"><target xml:lang="en">the cat</target></alt-trans></trans-unit>',
        '<trans-unit id="d"><source>a tree</source><target state="final">un arbre</target>'
        '<alt-trans origin="deepl"><target xml:lang="fr">un arbre</target></alt-trans>'
        '</trans-unit>'] + ['<trans-unit id="u%d"><source>x</source><target>y</target>'
                            '</trans-unit>' % i for i in range(150)]
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "sap.xlf")
        with open(p, "w") as f:
            f.write(xlf(units))
        r = run("--json", "--xliff", p)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["segments"] == 1 and list(out["systems"]) == ["deepl"], out["systems"].keys()
        sk = out["skipped"]
        assert sk["total"] == 151 and sk["reasons"]["unconfirmed"] == 150, sk
        assert sk["reasons"]["no MT candidate: alt-trans in the source language (en)"] == 1, sk
        assert "1 segment scored, 151 skipped" in r.stderr, r.stderr
        # nothing to score: exit 1 with the reasons
        with open(p, "w") as f:
            f.write(xlf(units[:1] + units[2:]))
        r = run("--xliff", p)
        assert r.returncode == 1, r.returncode
        assert "nothing to score" in r.stderr and "150 unconfirmed" in r.stderr, r.stderr


def test_two_files():
    ns = ' xmlns:m="http://www.memsource.com/mxlf/2.0"'
    pre = xlf(['<trans-unit id="1" m:trans-origin="mt"><source>the cat sleeps</source>'
               '<target>le chat dort</target></trans-unit>',
               '<trans-unit id="2" m:trans-origin="tm"><source>a red house</source>'
               '<target>une maison rouge</target></trans-unit>',
               '<trans-unit id="3"><source>the dog runs</source><target>le chien court</target>'
               '</trans-unit>'], ns=ns)
    final = xlf(['<trans-unit id="%s"><source>%s</source><target state="final">%s</target>'
                 '</trans-unit>' % t for t in [("1", "the cat sleeps", "le chat est endormi"),
                                                ("2", "a red house", "une maison rouge"),
                                                ("3", "the dog runs", "le chien court vite")]])
    with tempfile.TemporaryDirectory() as d:
        pp, fp = os.path.join(d, "pre.xlf"), os.path.join(d, "final.xlf")
        with open(pp, "w") as f:
            f.write(pre)
        with open(fp, "w") as f:
            f.write(final)
        got = score("--xliff-mt", pp, "--xliff", fp)
        assert got["segments"] == 2 and list(got["systems"]) == ["mt"], got
        assert got["skipped"]["reasons"] == {
            "no MT candidate: pre-translated from tm, not MT (Phrase m:trans-origin)": 1}, got
        ref, hyp = os.path.join(d, "ref"), os.path.join(d, "mt")
        with open(ref, "w") as f:
            f.write("le chat est endormi\nle chien court vite\n")
        with open(hyp, "w") as f:
            f.write("le chat dort\nle chien court\n")
        plain = score("--ref", ref, "--hyp", "mt=" + hyp, "--source-lang", "en",
                      "--target-lang", "fr")
        assert got["systems"] == plain["systems"]
        r = run("--xliff-mt", pp, "--xliff", fp, "--xliff", fp)
        assert r.returncode == 2, r.returncode


def test_sgml_unclosed_last_doc():
    """A WMT SGML file whose last <doc> is not closed (the historical TICO-19
    release) is read as sacreBLEU reads it, with a warning."""
    segs = [("1", "le chat dort", "le chat dort"), ("2", "un chien", "le chien")]

    def sgm(kind, sysid, col, close):
        body = "".join('<seg id="%s">%s</seg>\n' % (i, t[col]) for i, *t in
                       [(a, b, c) for a, b, c in segs])
        return ('<%s setid="t" srclang="en" trglang="fr">\n<doc docid="d1" sysid="%s">\n%s%s'
                '</%s>\n' % (kind, sysid, body, "</doc>\n" if close else "", kind))
    with tempfile.TemporaryDirectory() as d:
        out = {}
        for close in (True, False):
            ref, hyp = os.path.join(d, "ref%d.sgm" % close), os.path.join(d, "hyp%d.sgm" % close)
            with open(ref, "w") as f:
                f.write(sgm("refset", "ref", 0, close))
            with open(hyp, "w") as f:
                f.write(sgm("tstset", "mt", 1, True))
            r = run("--json", "--sgm-ref", ref, "--sgm-hyp", hyp, "--target-lang", "fr")
            assert r.returncode == 0, r.stderr
            assert ("not closed" in r.stderr) == (not close), r.stderr
            out[close] = json.loads(r.stdout)["systems"]
        assert out[True] == out[False]


def test_replay_nothing_to_post_exits_1():
    """adaptmon replay of an XLIFF file whose units all lack a confirmed
    target or an MT candidate exits 1 naming the reasons (it used to post
    nothing and exit 0); no server is contacted."""
    units = ['<trans-unit id="u%d"><source>x</source><target>y</target></trans-unit>' % i
             for i in range(3)]
    units.append('<trans-unit id="s"><source>a</source><target state="final">b</target>'
                 '<alt-trans origin="mt"><target xml:lang="en">a</target></alt-trans>'
                 '</trans-unit>')
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "none.xlf")
        with open(p, "w") as f:
            f.write(xlf(units))
        r = subprocess.run([A, "replay", "--server", "http://127.0.0.1:9", "--session", "s1", p],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1, (r.returncode, r.stderr)
        assert "nothing to replay" in r.stderr and "3 unconfirmed" in r.stderr, r.stderr
        assert "alt-trans in the source language (en)" in r.stderr, r.stderr


def peak_rss_kib(*cmd):
    """Peak RSS (KiB) of one run of cmd, measured in a fresh process."""
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code] + list(cmd), capture_output=True,
                         text=True).stdout.split()
    return int(out[0]), int(out[1])


def test_tmx_and_comments_memory_bounded():
    """A 24 MiB TMX background and a 24 MiB XLIFF of comments are read with
    memory independent of the document (issue 25 item 5): the peak stays
    below the file (read whole by score) + 48 MiB. The TMX tree reader took
    about 20 times the file."""
    if os.environ.get("VALGRIND") == "1" or "asan" in A:
        return
    size = 24 << 20
    with tempfile.TemporaryDirectory() as d:
        tmx = os.path.join(d, "big.tmx")
        tu = ('<tu><tuv xml:lang="en"><seg>a b</seg></tuv><tuv xml:lang="fr"><seg>le chat '
              '<ph>&lt;b/&gt;</ph>dort %d</seg></tuv></tu>\n')
        with open(tmx, "w") as f:
            f.write('<?xml version="1.0"?><tmx version="1.4"><header srclang="en"/><body>\n')
            i = 0
            while f.tell() < size:
                f.write(tu % i)
                i += 1
            f.write("</body></tmx>\n")
        rc, kib = peak_rss_kib(A, "score", "--xliff", os.path.join(X, "omegat.xlf"),
                               "--background", tmx)
        assert rc == 0, rc
        print("    TMX %d MiB: peak RSS %d MiB" % (size >> 20, kib >> 10))
        assert kib < (size >> 10) + 48 * 1024, kib
        xl = os.path.join(d, "comments.xlf")
        c = "<!-- " + "x" * 1000 + " -->\n"
        unit = ('<trans-unit id="u%d"><source>a b</source><target state="final">c d</target>'
                '<alt-trans origin="mt"><target>c e</target></alt-trans></trans-unit>\n')
        with open(xl, "w") as f:
            f.write('<?xml version="1.0"?><xliff version="1.2"><file source-language="en" '
                    'target-language="fr"><body>\n')
            i = 0
            while f.tell() < size:
                f.write(c)
                if i % 1000 == 0:
                    f.write(unit % i)
                i += 1
            f.write("</body></file></xliff>\n")
        rc, kib = peak_rss_kib(A, "score", "--xliff", xl)
        assert rc == 0, rc
        print("    XLIFF of comments %d MiB: peak RSS %d MiB" % (size >> 20, kib >> 10))
        assert kib < (size >> 10) + 48 * 1024, kib


def test_tbx_of_comments_memory_bounded():
    """A 24 MiB TBX glossary made mostly of comments: comments get no tree
    node (issue 25 item 5), so the peak stays below twice the file (score's
    copy and libxml2's input buffer) + 64 MiB; it took 235 MiB before."""
    if os.environ.get("VALGRIND") == "1" or "asan" in A:
        return
    size = 24 << 20
    e = ('<termEntry id="e%d"><langSet xml:lang="en"><tig><term>word%d</term></tig></langSet>'
         '<langSet xml:lang="fr"><tig><term>mot%d</term></tig></langSet></termEntry>\n')
    with tempfile.TemporaryDirectory() as d:
        tbx = os.path.join(d, "c.tbx")
        with open(tbx, "w") as f:
            f.write('<?xml version="1.0"?><martif type="TBX"><text><body>\n')
            i = 0
            while f.tell() < size:
                f.write("<!--" + "x" * 20 + "-->" * 1)
                f.write(("<!--" + "x" * 20 + "-->") * 99 + "\n")
                if i % 100 == 0:
                    f.write(e % (i, i, i))
                i += 1
            f.write("</body></text></martif>\n")
        src, ref = os.path.join(d, "s"), os.path.join(d, "r")
        with open(src, "w") as f:
            f.write("the word1\n")
        with open(ref, "w") as f:
            f.write("le mot1\n")
        rc, kib = peak_rss_kib(A, "score", "--src", src, "--ref", ref, "--hyp", ref,
                               "--source-lang", "en", "--target-lang", "fr", "--glossary", tbx)
        assert rc == 0, rc
        print("    TBX of comments %d MiB: peak RSS %d MiB" % (size >> 20, kib >> 10))
        assert kib < 2 * (size >> 10) + 64 * 1024, kib


def test_tbx_entries_memory_bounded():
    """A 16 MiB TBX of 100,000 entries is streamed (each entry freed after
    its import): the peak stays below twice the file + 64 MiB (the glossary
    itself is most of it); the tree reader took 269 MiB."""
    if os.environ.get("VALGRIND") == "1" or "asan" in A:
        return
    size = 16 << 20
    e = ('<termEntry id="e%d"><langSet xml:lang="en"><tig><term>word%d</term></tig></langSet>'
         '<langSet xml:lang="fr"><tig><term>mot%d</term></tig></langSet></termEntry>\n')
    with tempfile.TemporaryDirectory() as d:
        tbx = os.path.join(d, "e.tbx")
        with open(tbx, "w") as f:
            f.write('<?xml version="1.0"?><martif type="TBX"><text><body>\n')
            i = 0
            while f.tell() < size:
                f.write(e % (i, i, i))
                i += 1
            f.write("</body></text></martif>\n")
        src, ref = os.path.join(d, "s"), os.path.join(d, "r")
        with open(src, "w") as f:
            f.write("the word1\n")
        with open(ref, "w") as f:
            f.write("le mot1\n")
        rc, kib = peak_rss_kib(A, "score", "--src", src, "--ref", ref, "--hyp", ref,
                               "--source-lang", "en", "--target-lang", "fr", "--glossary", tbx)
        assert rc == 0, rc
        print("    TBX of %d entries (%d MiB): peak RSS %d MiB" % (i, size >> 20, kib >> 10))
        assert kib < 2 * (size >> 10) + 64 * 1024, kib


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

#!/usr/bin/env python3
"""Writes the XLIFF/TMX test files of tests/data/xliff from the TICO-19 En->Fr dev set.

Usage: python3 tests/data/xliff/make.py [SYSTEMS_DIR]
  SYSTEMS_DIR holds adaptive-tiny.fr (default /work/shared/data/tico19-enfr-dev/systems).

Takes the first N segments of the set: source (dev.en-fr.en.sgm), confirmed translation
(dev.en-fr.fr.sgm), two MT systems: "fairseq" (en-fr.dev.txt.truecased.sgm) and "adaptive-tiny".
Every 7th segment (index % 7 == 3) is left unconfirmed in each file, so that
expected.json (the confirmed segments, as the JSON the API takes) is the same for all formats.
The files imitate the shapes that Trados (sdlxliff), memoQ (mqxliff), Phrase (mxliff 1.2 and
XLIFF 2.x) and OmegaT (XLIFF 1.2) write, from the author's knowledge of those conventions (no
tool's sample file was copied). Terms are wrapped in paired inline codes (g / pc / bpt-ept) and
a standalone code (x / ph) ends every target: scores must not see them."""
import html
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(ROOT, "data", "tico19-enfr-dev")
SYSDIR = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/tico19-enfr-dev/systems"
N = 60
SEG = re.compile(r'<seg id="([^"]+)">(.*?)</seg>')
TERM = re.compile(r'<term [^>]*>(.*?)</term>')


def plain(s):
    s = TERM.sub(r"\1", s)
    s = re.sub(r"<[^>]+>", "", s)
    return " ".join(html.unescape(s).split())


def segs(path):
    with open(path, encoding="utf-8") as f:
        return [(m.group(1), m.group(2)) for m in SEG.finditer(f.read())]


def marked(raw, kind):
    """Text of an SGML segment with its <term> spans as inline codes (XML-escaped)."""
    out, pos, k = [], 0, 0
    for m in TERM.finditer(raw):
        out.append(html.escape(plain(raw[pos:m.start()]), quote=False))
        t = html.escape(plain(m.group(1)), quote=False)
        k += 1
        if kind == "g":
            out.append(f' <g id="{k}">{t}</g> ')
        elif kind == "pc":
            out.append(f' <pc id="{k}" dataRefStart="d{k}">{t}</pc> ')
        else:
            out.append(f' <bpt id="{k}">&lt;b&gt;</bpt>{t}<ept id="{k}">&lt;/b&gt;</ept> ')
        pos = m.end()
    out.append(html.escape(plain(raw[pos:]), quote=False))
    return " ".join("".join(out).split())


src = segs(os.path.join(DATA, "dev.en-fr.en.sgm"))[:N]
ref = segs(os.path.join(DATA, "dev.en-fr.fr.sgm"))[:N]
fair = segs(os.path.join(DATA, "en-fr.dev.txt.truecased.sgm"))[:N]
with open(os.path.join(SYSDIR, "adaptive-tiny.fr"), encoding="utf-8") as f:
    tiny = [l.rstrip("\n") for l in f][:N]
assert [s[0] for s in src] == [r[0] for r in ref] == [h[0] for h in fair]
units = []
for i in range(N):
    units.append(dict(id="tico-" + ref[i][0], src=src[i][1], ref=ref[i][1],
                      fair=plain(fair[i][1]), tiny=" ".join(tiny[i].split()), ok=i % 7 != 3))
E = lambda s: html.escape(s, quote=False)


def write(name, text):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(text)


# Trados Studio: sdlxliff — seg-source/mrk segmentation, sdl:seg-defs confirmation.
out = ['<?xml version="1.0" encoding="utf-8"?>',
       '<xliff xmlns:sdl="http://sdl.com/FileTypes/SdlXliff/1.0" '
       'xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2" sdl:version="1.0">',
       '<file original="tico19.docx" datatype="x-sdlfilterframework2" source-language="en-US" '
       'target-language="fr-FR"><header><sdl:ref-files/></header><body>',
       '<group><sdl:cxts><sdl:cxt id="p"/></sdl:cxts>']
for n, u in enumerate(units):
    conf = "ApprovedTranslation" if u["ok"] else "Draft"
    out.append(
        f'<trans-unit id="0b7c{n:04d}-5a1e-4c2f-9d3e-tico">'
        f'<source>{marked(u["src"], "g")}</source>'
        f'<seg-source><mrk mtype="seg" mid="{n + 1}">{marked(u["src"], "g")}</mrk></seg-source>'
        f'<target><mrk mtype="seg" mid="{n + 1}">{marked(u["ref"], "g")} <x id="br{n}"/></mrk></target>'
        f'<alt-trans mid="{n + 1}" tool-id="fairseq"><target>{E(u["fair"])}</target></alt-trans>'
        f'<alt-trans mid="{n + 1}" origin="adaptive-tiny"><target>{E(u["tiny"])}</target></alt-trans>'
        f'<alt-trans mid="{n + 1}" origin="TM: project memory" match-quality="75">'
        f'<target>{E(u["fair"])} (TM)</target></alt-trans>'
        f'<sdl:seg-defs><sdl:seg id="{n + 1}" conf="{conf}" origin="mt" '
        f'origin-system="fairseq"/></sdl:seg-defs></trans-unit>')
out.append('</group></body></file></xliff>\n')
write("trados.sdlxliff", "\n".join(out))

# memoQ: mqxliff — mq:status on the trans-unit; MT via phase and state-qualifier.
out = ['<?xml version="1.0" encoding="utf-8"?>',
       '<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" xmlns:mq="MQXliff" version="1.2">',
       '<file original="tico19.docx" source-language="eng" target-language="fre" datatype="plaintext">',
       '<header><phase-group><phase phase-name="mt1" process-name="Machine Translation" '
       'tool-id="adaptive-tiny"/></phase-group></header><body>']
for n, u in enumerate(units):
    st = "ManuallyConfirmed" if u["ok"] else "PartiallyEdited"
    out.append(
        f'<trans-unit id="{n + 1}" mq:status="{st}" mq:segmentguid="g{n}">'
        f'<source xml:space="preserve">{marked(u["src"], "bpt")}</source>'
        f'<target xml:space="preserve">{marked(u["ref"], "bpt")} <ph id="99">&lt;br/&gt;</ph></target>'
        f'<alt-trans origin="fairseq"><target state-qualifier="mt-suggestion">{E(u["fair"])}</target></alt-trans>'
        f'<alt-trans phase-name="mt1"><target>{E(u["tiny"])}</target></alt-trans>'
        f'</trans-unit>')
out.append('</body></file></xliff>\n')
write("memoq.mqxliff", "\n".join(out))

# Phrase (Memsource) mxliff 1.2 — m:confirmed on the trans-unit.
out = ['<?xml version="1.0" encoding="UTF-8"?>',
       '<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" '
       'xmlns:m="http://www.memsource.com/mxlf/2.0" version="1.2" m:version="2.0">',
       '<file original="tico19.txt" source-language="en" target-language="fr" datatype="x-undefined">',
       '<body>']
for n, u in enumerate(units):
    out.append(
        f'<group id="{n}"><trans-unit id="tico:{n + 1}" m:confirmed="{1 if u["ok"] else 0}" '
        f'm:locked="false"><source>{marked(u["src"], "g")}</source>'
        f'<target>{marked(u["ref"], "g")}</target>'
        f'<alt-trans origin="fairseq"><target>{E(u["fair"])}</target></alt-trans>'
        f'<alt-trans origin="adaptive-tiny"><target>{E(u["tiny"])}</target></alt-trans>'
        f'</trans-unit></group>')
out.append('</body></file></xliff>\n')
write("phrase.mxliff", "\n".join(out))

# Phrase / generic XLIFF 2.x with the Translation Candidates module.
out = ['<?xml version="1.0" encoding="UTF-8"?>',
       '<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" '
       'xmlns:mtc="urn:oasis:names:tc:xliff:matches:2.0" version="2.1" srcLang="en" trgLang="fr">',
       '<file id="f1" original="tico19.txt">']
for n, u in enumerate(units):
    st = "final" if u["ok"] else "initial"
    out.append(
        f'<unit id="u{n + 1}"><mtc:matches>'
        f'<mtc:match ref="#s{n + 1}" type="mt" origin="fairseq"><source>{E(plain(u["src"]))}</source>'
        f'<target>{E(u["fair"])}</target></mtc:match>'
        f'<mtc:match ref="#s{n + 1}" type="tm" origin="memory" matchQuality="80"><source>x</source>'
        f'<target>{E(u["fair"])} (TM)</target></mtc:match>'
        f'<mtc:match ref="#s{n + 1}" type="mt" origin="adaptive-tiny"><source>{E(plain(u["src"]))}</source>'
        f'<target>{E(u["tiny"])}</target></mtc:match></mtc:matches>'
        f'<segment id="s{n + 1}" state="{st}"><source>{marked(u["src"], "pc")}</source>'
        f'<target>{marked(u["ref"], "pc")} <ph id="p{n}"/></target></segment></unit>')
out.append('</file></xliff>\n')
write("phrase-2.xlf", "\n".join(out))

# OmegaT: XLIFF 1.2 with target state.
out = ['<?xml version="1.0" encoding="UTF-8"?>',
       '<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">',
       '<file original="tico19.txt" source-language="EN-US" target-language="FR-FR" datatype="plaintext">',
       '<header><tool tool-id="omegat" tool-name="OmegaT"/></header><body>']
for n, u in enumerate(units):
    st = "translated" if u["ok"] else "needs-translation"
    out.append(
        f'<trans-unit id="{n + 1}"><source>{marked(u["src"], "g")}</source>'
        f'<target state="{st}">{marked(u["ref"], "g")}</target>'
        f'<alt-trans tool-id="fairseq"><target>{E(u["fair"])}</target></alt-trans>'
        f'<alt-trans tool-id="adaptive-tiny"><target>{E(u["tiny"])}</target></alt-trans>'
        f'</trans-unit>')
out.append('</body></file></xliff>\n')
write("omegat.xlf", "\n".join(out))

exp = [dict(id=u["id"], source=plain(u["src"]), translation=plain(u["ref"]),
            hypotheses={"fairseq": u["fair"], "adaptive-tiny": u["tiny"]})
       for u in units if u["ok"]]
write("expected.json", json.dumps(dict(systems=["fairseq", "adaptive-tiny"], segments=exp,
                                       skipped=sum(1 for u in units if not u["ok"])),
                                  ensure_ascii=False, indent=1) + "\n")

# TMX: the references of the first N segments as a memory (en source, fr target).
out = ['<?xml version="1.0" encoding="UTF-8"?>', '<tmx version="1.4">',
       '<header creationtool="make.py" creationtoolversion="1" segtype="sentence" o-tmf="none" '
       'adminlang="en" srclang="en-US" datatype="plaintext"/>', '<body>']
for u in units:
    out.append(f'<tu><tuv xml:lang="en-US"><seg>{E(plain(u["src"]))}</seg></tuv>'
               f'<tuv xml:lang="fr-FR"><seg>{marked(u["ref"], "bpt")}</seg></tuv></tu>')
out.append('</body></tmx>\n')
write("memory.tmx", "\n".join(out))

#!/usr/bin/env python3
"""TICO-19 En->Fr dev segments for the benchmarks (bench/run.sh).

  tico.py lua OUT.lua          the segments as a Lua table (wrk scripts)
  tico.py score N SRC HYP REF  N segments (the dev set repeated) as three
                               line files for `adaptmon score`
Source: the English side, hypothesis: the Fairseq MT output, translation
(the confirmed post-edit): the French reference. Term tags are stripped.
"""
import html, json, os, re, sys

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "tico19-enfr-dev")
SEG = re.compile(r"<seg id=\"([^\"]+)\">(.*?)</seg>", re.S)
TAG = re.compile(r"<[^>]+>")


def read(name):
    with open(os.path.join(D, name), encoding="utf-8") as f:
        segs = SEG.findall(f.read())
    return [" ".join(html.unescape(TAG.sub("", t)).split()) for _, t in segs]


def segments():
    src, ref, hyp = read("dev.en-fr.en.sgm"), read("dev.en-fr.fr.sgm"), read("en-fr.dev.txt.truecased.sgm")
    assert len(src) == len(ref) == len(hyp) == 971
    return list(zip(src, hyp, ref))


def main():
    segs = segments()
    if sys.argv[1] == "lua":
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            f.write("return {\n")
            for s, h, r in segs:
                body = json.dumps({"source": s, "hypothesis": h, "translation": r}, ensure_ascii=False)
                # the id is spliced in by the script: body starts with '{'
                f.write("  %s,\n" % json.dumps(body[1:], ensure_ascii=False).replace("\\u", "\\\\u"))
            f.write("}\n")
    elif sys.argv[1] == "score":
        n = int(sys.argv[2])
        outs = [open(p, "w", encoding="utf-8") for p in sys.argv[3:6]]
        for i in range(n):
            s, h, r = segs[i % len(segs)]
            for f, t in zip(outs, (s, h, r)):
                f.write(t + "\n")
        for f in outs:
            f.close()


if __name__ == "__main__":
    main()

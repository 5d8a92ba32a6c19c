#!/usr/bin/env python3
"""Session on TICO-19 (971 segments, its glossary) against corpus_score on
the same segments: CPU time of this process (all its threads), and whether
the totals are equal. Run from the repository's root after building the
extension (python3 tests/python/test_session.py builds it):

    python3 tests/python/bench_session.py
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
sys.path.insert(0, os.path.join(ROOT, "python"))
from harness import TICO_GLOSSARY, tico19  # noqa: E402

import adaptmon as am  # noqa: E402


def main():
    segs = tico19()
    opts = dict(target_lang="fr", glossary=TICO_GLOSSARY, source_lang="en")
    t0 = time.process_time()
    s = am.Session(**opts)
    for x in segs:
        s.add(x["source"], x["translation"], x["hypothesis"])
    t1 = time.process_time()
    r = am.corpus_score([x["hypothesis"] for x in segs], [x["translation"] for x in segs],
                        [x["source"] for x in segs], **opts)
    t2 = time.process_time()
    print("Session: %d adds %.2f s CPU (%.2f ms an add); corpus_score %.2f s CPU; "
          "totals equal: %s" % (len(segs), t1 - t0, (t1 - t0) / len(segs) * 1000, t2 - t1,
                                s.last.systems["hyp"].raw == r.systems["hyp"].raw))


if __name__ == "__main__":
    main()

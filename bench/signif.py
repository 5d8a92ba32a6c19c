#!/usr/bin/env python3
"""Cost of `adaptmon score --paired-bs / --paired-ar` on the TICO-19 dev set
(971 segments, 4 systems: Fairseq + data/tico19-enfr-dev/systems/*.fr):
every metric (BLEU, chrF2, chrF2++, TER, R0, R1, R0+1, 1-TERm), 1000
bootstrap resamples or 10000 AR trials. Prints the median wall and CPU time
of 5 runs without a test, with --paired-bs and with --paired-ar; the
difference is the cost of the test. Then the same data as a live session
(4 systems, baseline_system) and the time of GET …/metrics?ci=0.95, first
computed, then from the answer cache.

    python3 bench/signif.py [./adaptmon]
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import test_signif as t  # noqa: E402  (writes ref.fr / baseline.fr to a temp dir)

ADAPTMON = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "adaptmon")


def measure(extra):
    walls, cpus = [], []
    for _ in range(5):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([ADAPTMON, "score", *t.INPUT, "--json", *extra], check=True,
                       stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


for label, extra in (("score only", []), ("--paired-bs (1000)", ["--paired-bs"]),
                     ("--paired-ar (10000)", ["--paired-ar"])):
    w, c = measure(extra)
    print("%-22s wall %.3f s  cpu %.3f s" % (label, w, c))

# The same test live: GET /v1/sessions/{id}/metrics?ci=0.95 on a session of
# the 971 segments with the 4 systems (first answer: computed; then cached).
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
import harness  # noqa: E402

harness.ADAPTMON = ADAPTMON if os.path.isabs(ADAPTMON) else os.path.join(os.getcwd(), ADAPTMON)
S, C = harness.serve()
try:
    names = ["base", "adaptive", "weak", "tiny"]
    C.create_session(id="bench", systems=names, options={"baseline_system": "base"})
    texts = [t.sgm_text(t.REF_SGM), t.sgm_text(t.HYP_SGM)] + [
        open(os.path.join(t.SYS, n), encoding="utf-8").read().splitlines() for n in t.NAMES[1:]]
    src = [x["source"] for x in harness.tico19()]
    for i in range(len(texts[0])):
        body = {"id": str(i), "source": src[i], "translation": texts[0][i],
                "hypotheses": dict(zip(names, (texts[k][i] for k in range(1, 5))))}
        r = C.post("/v1/sessions/bench/segments", body)
        assert r.status == 201, r.body
    for label in ("metrics?ci=0.95 (computed)", "metrics?ci=0.95 (cached)"):
        t0 = time.perf_counter()
        r = C.get("/v1/sessions/bench/metrics?ci=0.95")
        assert r.status == 200
        print("%-28s wall %.3f s" % (label, time.perf_counter() - t0))
finally:
    harness.shutdown(S, C)

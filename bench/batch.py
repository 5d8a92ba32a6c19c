#!/usr/bin/env python3
"""Batches: peak memory and other sessions' write latency (issue 25 §5).

Posts one batch of N items (default 5,000, ~77 bytes of text each, like the
issue's 383 kB batch) into session "big" while a second client POSTs single
segments into session "other" as fast as it can; prints the server's peak
RSS (VmHWM) before and after the batch, the batch's wall time, and the
other session's POST latency (median, max) during the batch.

  python3 bench/batch.py [N]          (uses ./adaptmon; ADAPTMON=path to override)

Speed targets belong here; tests/reliability/test_batch.py keeps only a
no-stall-for-seconds sanity check.
"""
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "api"))
from harness import Server  # noqa: E402


def vm(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) // 1024
    return -1


def batch_body(n, prefix="b"):
    items = []
    for i in range(n):
        t = "the patient %d has a fever and a cough since %d days" % (i, i % 9)
        items.append({"id": "%s%d" % (prefix, i), "source": t, "hypothesis": t, "translation": t})
    return json.dumps(items).encode()


def run(n):
    srv = Server("--max-batch", str(max(n, 5000)), "--max-body", "64MiB")
    pid = srv.proc.pid
    c = srv.client()
    opts = {"profile": "simianer2019", "stopwords": "iso"}
    c.create_session(id="big", options=opts)
    c.create_session(id="other", options=opts)
    body = batch_body(n)
    lat, stop = [], threading.Event()

    def other():
        oc = srv.client()
        i = 0
        while not stop.is_set():
            t0 = time.monotonic()
            r = oc.post("/v1/sessions/other/segments",
                        {"id": "o%d" % i, "source": "a cough", "hypothesis": "une toux",
                         "translation": "une toux"})
            lat.append(time.monotonic() - t0)
            assert r.status == 201, r.body
            i += 1
        oc.close()

    before = vm(pid, "VmHWM")
    th = threading.Thread(target=other)
    th.start()
    time.sleep(0.3)
    lat.clear()
    t0 = time.monotonic()
    r = c.request("POST", "/v1/sessions/big/segments", body, ctype="application/json")
    wall = time.monotonic() - t0
    stop.set()
    th.join()
    assert r.status == 200, r.body[:300]
    ans = r.json()
    after = vm(pid, "VmHWM")
    out = {"items": n, "body_kB": len(body) // 1024, "created": ans["created"],
           "rss_peak_before_MB": before, "rss_peak_after_MB": after, "batch_s": round(wall, 2),
           "answer_kB": len(r.body) // 1024, "other_posts": len(lat),
           "other_median_ms": round(1000 * statistics.median(lat), 1) if lat else None,
           "other_max_ms": round(1000 * max(lat), 1) if lat else None}
    c.close()
    srv.stop()
    return out


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    print(json.dumps(run(n)))

#!/usr/bin/env python3
"""One batch of N items (test_batch's) into a fresh session: its wall time,
and in PostgreSQL the statements it cost (pg_stat_statements), in all and
per item, with the most frequent ones (issue 28: a statement is a round
trip there).

  python3 bench/batch_pg.py N pg|sqlite   (uses ./adaptmon; ADAPTMON=path to override)

pg: a throwaway PostgreSQL 15 on loopback without a standby
(tests/pgutil.py; --pg-require-sync off). Results: bench/README.md,
"Batch POSTs on PostgreSQL".
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "api"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reliability"))
import harness  # noqa: E402
from rel import OPTIONS  # noqa: E402


def items(n):
    out = []
    for i in range(n):
        t = "the patient %d has a fever and a cough since %d days" % (i, i % 9)
        out.append({"id": "b%d" % i, "source": t, "hypothesis": t, "translation": t})
    return out


def main():
    n, backend = int(sys.argv[1]), sys.argv[2]
    pg = None
    args = ["--max-batch", str(n), "--max-body", "16MiB"]
    if backend == "pg":
        import pgutil
        pg = pgutil.Server(extra=["shared_preload_libraries=pg_stat_statements"])
        url = pg.create_db("b")
        pg.query("CREATE EXTENSION pg_stat_statements", db="b")
        srv = harness.Server("--pg-require-sync", "off", *args, db=url)
    else:
        srv = harness.Server(*args)
    c = srv.client()
    c.create_session(id="m", options=OPTIONS)
    c.close()
    c = srv.client()  # a new connection: opened by the request, with its timeout
    body = json.dumps(items(n)).encode()
    if pg:
        pg.query("SELECT pg_stat_statements_reset()", db="b")
    t = time.time()
    r = c.request("POST", "/v1/sessions/m/segments", body, ctype="application/json", timeout=1800)
    took = time.time() - t
    print("%s n=%d status=%d created=%s %.2f s" % (backend, n, r.status, r.json().get("created"),
                                                 took))
    if pg:
        total = int(pg.query("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements",
                             db="b")[0][0])
        print("statements %d (%.2f per item)" % (total, total / n))
        for calls, q in pg.query("SELECT calls, left(query, 70) FROM pg_stat_statements "
                                 "ORDER BY calls DESC LIMIT 6", db="b"):
            print("  %8s  %s" % (calls, q))
    c.close()
    srv.stop()
    if pg:
        pg.stop()


if __name__ == "__main__":
    main()

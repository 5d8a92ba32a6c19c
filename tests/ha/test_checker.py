"""The fault suite's checker and load generator without PostgreSQL.

tests/ha/faults.py decides "lost" by comparing what its load generator was
told was committed with what a reader finds; a checker that cannot see a
loss makes every fault run pass. Here a fake writer (a dict that "commits",
sometimes answers ambiguous after committing, sometimes before) and a fake
reader that forgets chosen rows drive the real Load and check(): the losses,
duplicates, ambiguous-but-committed counts and the write gap must come out
exactly. Runs anywhere in about a second. Prints "N passed, N failed".
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faults  # noqa: E402

passed = failed = 0


def ok(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))


class FakeDb:
    def __init__(self):
        self.rows = {}  # session -> [(seq, cid)]
        self.lock = threading.Lock()

    def put(self, session, cid):
        with self.lock:
            rows = self.rows.setdefault(session, [])
            if cid not in [c for _, c in rows]:
                rows.append((len(rows) + 1, cid))


class FakeWriter:
    """Every 7th attempt commits and then answers ambiguous (the connection
    broke after COMMIT); every 11th answers ambiguous without committing;
    a pause of 0.3 s once, holding the database's lock so that the other
    writers wait too, to make a known gap."""

    def __init__(self, db):
        self.db = db
        self.n = 0

    def create(self, session):
        self.db.rows.setdefault(session, [])

    def post(self, session, cid, body):
        self.n += 1
        if self.n == 40:  # every writer waits: the pause is the gap of all of them
            with self.db.lock:
                time.sleep(0.3)
        if self.n % 11 == 0:
            return "ambiguous"
        self.db.put(session, cid)
        return "ambiguous" if self.n % 7 == 0 else "acked"

    def drop(self):
        pass


class FakeReader:
    def __init__(self, db, forget=(), dup=None):
        self.db, self.forget, self.dup = db, set(forget), dup

    def segments(self, prefix):
        out = {}
        for s, rows in self.db.rows.items():
            out[s] = [(q, c) for q, c in rows if c not in self.forget]
            if self.dup and s == self.dup[0]:
                out[s].append((len(rows) + 1, self.dup[1]))
        return out


def main():
    db = FakeDb()
    load = faults.Load(lambda: FakeWriter(db), 2, prefix="t")
    load.start()
    time.sleep(0.6)
    load.finish()
    acked = sorted(load.acked)
    ok("the generator acknowledged segments", len(acked) > 50, str(len(acked)))
    ok("ambiguous attempts recorded", len(load.ambiguous) > 5, str(len(load.ambiguous)))

    r = faults.check(load, FakeReader(db))
    ok("nothing lost when the reader holds every row", r["lost"] == 0, str(r))
    ok("no problems", not r["problems"], str(r["problems"]))
    ok("ambiguous-then-committed counted (every ambiguous id is retried to success)",
       r["amb_committed"] == len(load.ambiguous), str(r))
    ok("the 0.3 s pause is the longest gap", 0.25 <= r["gap"] < 1.0, "%.3f" % r["gap"])

    gone = acked[:3]
    r = faults.check(load, FakeReader(db, forget=gone))
    ok("three forgotten acknowledged rows are three lost", r["lost"] == 3, str(r))
    ok("the lost ids are named", r["lost_ids"] == sorted(gone), str(r["lost_ids"]))

    r = faults.check(load, FakeReader(db, dup=("t0", acked[0])))
    ok("a client id stored twice is a problem", any("twice" in p for p in r["problems"]),
       str(r["problems"]))

    empty = faults.Load(lambda: FakeWriter(FakeDb()), 1, prefix="e")
    ok("no acknowledgement: the gap is infinite (a run that wrote nothing fails)",
       empty.gap() == float("inf"))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

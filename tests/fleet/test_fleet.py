"""Fleet acceptance: three adaptmon instances behind HAProxy on loopback,
routed by deploy/haproxy/haproxy.cfg (only addresses substituted) and
deploy/haproxy/adaptmon.lua; plus the online backup and restore.

  * 300 sessions created and fed through the router; each lives on exactly
    one instance, which is the one the instances' own owner map (421)
    agrees on; 100 +- 25 sessions per shard;
  * the fleet-wide session list through the router holds all 300, in pages;
  * killing one instance fails only its sessions; after a restart they are
    back with every acknowledged segment;
  * PUT /v1/vocabularies/... through the router reaches every instance;
  * `adaptmon backup` while segments are posted: a server started on the
    copy has every segment acknowledged before the backup began, and its
    totals equal a replay of its segments on a fresh server.

Needs: the haproxy binary (tools/deps.sh installs haproxy and lua-cjson).
Python standard library only."""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet  # noqa: E402
from fleet import (ADAPTMON, Client, Instance, Router, free_port, have, router_config,  # noqa: E402
                   segment, tmpdir)
from harness import check, eq, run_tests  # noqa: E402

N_SESSIONS = 300
SEGS = 3
NAMES = ["adaptmon-0", "adaptmon-1", "adaptmon-2"]  # the shipped server names

F = {}  # the running fleet: instances, router, expectations


def setup():
    if not have("haproxy"):
        raise AssertionError("haproxy is not installed (tools/deps.sh installs it)")
    d = tmpdir("adaptmon-fleet-")
    ports = [free_port() for _ in NAMES]
    rport = free_port()
    owner_map = "; ".join(["%s=http://127.0.0.1:%d" % (n, p)
                                            for n, p in zip(NAMES, ports)])
    insts = []
    for n, p in zip(NAMES, ports):
        inst = Instance(n, p, os.path.join(d, n + ".db"),
                        args=["--owner-map", "self=%s; %s" % (n, owner_map)])
        insts.append(inst.start())
    text, subs = router_config(ports, rport)
    F.update(dir=d, insts=insts, ports=ports, rport=rport, cfg=text, subs=subs,
             acked={}, owner={})
    F["router"] = Router(text, rport, d).start()


def teardown():
    if "router" in F:
        F["router"].kill()
    for i in F.get("insts", []):
        i.stop()


def sid(k):
    return "fleet-%04d" % k


def test_01_router_config_is_the_shipped_one():
    rc, out = F["router"].check()
    eq(rc, 0, "haproxy -c on the generated config:\n" + out)
    # 2 backends x 3 servers + bind + lua-load: nothing else was changed
    eq(F["subs"], 8, "substitutions made in deploy/haproxy/haproxy.cfg")
    with open(fleet.HAPROXY_CFG, encoding="utf-8") as f:
        shipped = f.read()
    eq(len(shipped.splitlines()), len(F["cfg"].splitlines()), "line count of the tested config")


def _feed(keys, errors):
    c = F["router"].client()
    try:
        for k in keys:
            r = c.request("POST", "/v1/sessions", {"id": sid(k), "source_lang": "en",
                                                   "target_lang": "fr"})
            if r.status != 201:
                errors.append("create %s: %d %s" % (sid(k), r.status, r.body[:200]))
                continue
            for i in range(SEGS):
                r = c.request("POST", "/v1/sessions/%s/segments" % sid(k), segment(i, k))
                if r.status != 201:
                    errors.append("segment %s/%d: %d %s" % (sid(k), i, r.status, r.body[:200]))
                    break
                F["acked"].setdefault(sid(k), []).append("seg-%d" % i)
    finally:
        c.close()


def test_02_create_and_feed_300_sessions_through_the_router():
    errors = []
    threads = [threading.Thread(target=_feed, args=(range(t, N_SESSIONS, 4), errors))
               for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    eq(errors[:5], [], "errors while feeding through the router")
    eq(len(F["acked"]), N_SESSIONS, "sessions with acknowledged segments")
    # a creation without an id cannot be routed: the router refuses it
    r = F["router"].client().request("POST", "/v1/sessions", {"source_lang": "en",
                                                              "target_lang": "fr"})
    eq(r.status, 400, "POST /v1/sessions without id through the router")


def _shard_ids(inst):
    r = inst.client().request("GET", "/v1/sessions?limit=1000")
    eq(r.status, 200, "GET /v1/sessions on %s" % inst.name)
    doc = r.json()
    ids = [s["id"] for s in doc["sessions"]]
    eq(doc["total"], len(ids), "total on %s" % inst.name)
    return ids


def test_03_every_session_lives_on_exactly_one_instance():
    seen = {}
    for inst in F["insts"]:
        for i in _shard_ids(inst):
            check(i not in seen, "%s on both %s and %s" % (i, seen.get(i), inst.name))
            seen[i] = inst.name
    eq(sorted(seen), sorted(sid(k) for k in range(N_SESSIONS)), "sessions found on the shards")
    counts = {n: sum(1 for v in seen.values() if v == n) for n in NAMES}
    print("   sessions per shard: %s" % counts)
    for n, c in counts.items():
        check(75 <= c <= 125, "shard %s holds %d sessions (expected 100 +- 25)" % (n, c))
    F["owner"] = seen
    # each instance holds the segments of its sessions
    for inst in F["insts"]:
        c = inst.client()
        for i in [x for x, o in seen.items() if o == inst.name][:20]:
            doc = c.request("GET", "/v1/sessions/%s" % i).json()
            eq(doc["segments"], SEGS, "segments of %s on %s" % (i, inst.name))


def test_04_instances_agree_with_the_router_421_elsewhere():
    """The owner map of the instances (server/http/shard.c) computes the router's
    hash: every session's owner accepts it, the two others answer 421
    problem+json naming the owner."""
    by_name = {i.name: i for i in F["insts"]}
    clients = {n: i.client() for n, i in by_name.items()}
    for i, owner in sorted(F["owner"].items()):
        for n, c in clients.items():
            r = c.request("GET", "/v1/sessions/%s/metrics" % i)
            if n == owner:
                eq(r.status, 200, "%s on its owner %s" % (i, n))
            else:
                eq(r.status, 421, "%s on %s (owner %s)" % (i, n, owner))
                p = r.json()
                eq((p["type"].rsplit("/", 1)[-1], p["owner"], p["owner_url"]),
                   ("misdirected-request", owner,
                    "http://127.0.0.1:%d" % by_name[owner].port), "421 problem for " + i)


def test_05_requests_always_reach_the_owner():
    c = F["router"].client()
    for rnd in range(2):
        for k in range(N_SESSIONS):
            r = c.request("GET", "/v1/sessions/%s/metrics" % sid(k))
            eq(r.status, 200, "round %d: GET metrics of %s through the router" % (rnd, sid(k)))
            eq(r.json()["segments"], SEGS, "segments of %s" % sid(k))
    # a re-post of an acknowledged segment is answered from the owner's log
    r = c.request("POST", "/v1/sessions/%s/segments" % sid(7), segment(0, 7))
    eq(r.status, 200, "idempotent re-post through the router")


def test_06_fleet_session_list_is_the_union():
    c = F["router"].client()
    r = c.request("GET", "/v1/sessions?limit=1000")
    eq(r.status, 200, "GET /v1/sessions through the router")
    doc = r.json()
    ids = [s["id"] for s in doc["sessions"]]
    eq(ids, sorted(sid(k) for k in range(N_SESSIONS)), "fleet list (limit=1000)")
    eq((doc["total"], doc["next"]), (N_SESSIONS, None), "total and next")
    check(all(s["segments"] == SEGS for s in doc["sessions"]), "session objects passed through")
    # pages of 37 follow the keyset cursor across the shards
    got, after, pages = [], None, 0
    while True:
        q = "/v1/sessions?limit=37" + ("&after=" + after if after else "")
        page = c.request("GET", q).json()
        got += [s["id"] for s in page["sessions"]]
        pages += 1
        check(len(page["sessions"]) <= 37, "page size")
        after = page["next"]
        if after is None or pages > 20:
            break
    eq(got, sorted(sid(k) for k in range(N_SESSIONS)), "ids over the pages")
    eq(pages, 9, "pages of 37 for 300 sessions")
    # a bad query is the shards' answer, relayed
    eq(c.request("GET", "/v1/sessions?limit=0").status, 400, "limit=0 through the router")


def test_07_killing_one_instance_fails_only_its_sessions():
    victim = F["insts"][1]
    victim.kill()  # kill -9
    mine = sorted(i for i, o in F["owner"].items() if o == victim.name)
    others = sorted(i for i, o in F["owner"].items() if o != victim.name)
    c = F["router"].client()
    for i in mine[:4]:  # each waits for HAProxy's connect retries (about 2 s)
        r = c.request("GET", "/v1/sessions/%s/metrics" % i)
        check(r.status in (502, 503), "session %s of the dead instance: %d" % (i, r.status))
    for n, i in enumerate(others):
        k = int(i.split("-")[1])
        r = c.request("POST", "/v1/sessions/%s/segments" % i, segment(SEGS, k))
        eq(r.status, 201, "segment for %s while %s is down" % (i, victim.name))
        F["acked"][i].append("seg-%d" % SEGS)
    # the fleet list shows the live shards and names the missing one
    r = c.request("GET", "/v1/sessions?limit=1000")
    eq(r.status, 200, "fleet list with one shard down")
    doc = r.json()
    eq(sorted(s["id"] for s in doc["sessions"]), others, "sessions listed with one shard down")
    eq(doc.get("missing_shards"), [victim.name], "missing_shards")
    # restart: the sessions come back with every acknowledged segment
    victim.start()
    for i in mine:
        r = c.request("GET", "/v1/sessions/%s/segments?limit=100" % i)
        eq(r.status, 200, "segments of %s after the restart" % i)
        body = r.json()
        items = body.get("segments", body.get("items", []))
        eq(sorted(s["id"] for s in items), sorted(F["acked"][i]), "segments of %s" % i)
    r = c.request("GET", "/v1/sessions?limit=1000")
    eq(len(r.json()["sessions"]), N_SESSIONS, "fleet list after the restart")
    check("missing_shards" not in r.json(), "no missing shard after the restart")


def test_08_vocabulary_reaches_every_instance():
    c = F["router"].client()
    r = c.request("PUT", "/v1/vocabularies/fleetvoc", "10 maison\n5 chat\n",
                  ctype="text/plain")
    check(r.status in (200, 201, 204), "PUT vocabulary through the router: %d %s"
          % (r.status, r.body[:200]))
    for inst in F["insts"]:
        eq(inst.client().request("GET", "/v1/vocabularies/fleetvoc").status, 200,
           "vocabulary on " + inst.name)
    r = c.request("DELETE", "/v1/vocabularies/fleetvoc")
    check(r.status in (200, 204), "DELETE vocabulary through the router: %d" % r.status)
    for inst in F["insts"]:
        eq(inst.client().request("GET", "/v1/vocabularies/fleetvoc").status, 404,
           "vocabulary deleted on " + inst.name)


# ---- backup and restore -----------------------------------------------------

def _metrics_systems(c, s):
    r = c.request("GET", "/v1/sessions/%s/metrics" % s)
    eq(r.status, 200, "metrics of " + s)
    doc = r.json()
    return doc["segments"], doc["systems"]


def test_09_online_backup_has_every_acknowledged_segment():
    d = tmpdir("adaptmon-backup-")
    src = Instance("src", free_port(), os.path.join(d, "src.db")).start()
    c = src.client()
    sessions = ["bk-%d" % k for k in range(4)]
    for s in sessions:
        eq(c.request("POST", "/v1/sessions", {"id": s, "source_lang": "en",
                                              "target_lang": "fr"}).status, 201, "create " + s)
    acked = []  # (monotonic time of the 201, session, segment id)
    stop = threading.Event()
    errors = []

    def writer(s, k):
        w = src.client()
        i = 0
        while not stop.is_set() and i < 5000:
            r = w.request("POST", "/v1/sessions/%s/segments" % s, segment(i, k))
            if r.status != 201:
                errors.append("%s/%d: %d" % (s, i, r.status))
                return
            acked.append((time.monotonic(), s, "seg-%d" % i))
            i += 1
        w.close()

    ws = [threading.Thread(target=writer, args=(s, k)) for k, s in enumerate(sessions)]
    for t in ws:
        t.start()
    time.sleep(0.5)
    dest = os.path.join(d, "copy", "backup.db")
    os.mkdir(os.path.dirname(dest))  # backup creates no directory (a typo would fill another disk)
    began = time.monotonic()
    before = [(s, g) for (t, s, g) in list(acked) if t < began]
    r = subprocess.run([ADAPTMON, "backup", "--db", src.db, dest], capture_output=True,
                       text=True, timeout=60)
    # writes continue after the copy: wait for some acknowledged after it began
    # (a fixed sleep is not enough on a fast machine, where the writers could
    # be done before the backup starts)
    deadline = time.monotonic() + 20
    while (sum(1 for (t, _, _) in list(acked) if t >= began) < 20 and not errors
           and time.monotonic() < deadline):
        time.sleep(0.05)
    stop.set()
    for t in ws:
        t.join()
    eq(errors, [], "writes during the backup")
    eq(r.returncode, 0, "adaptmon backup: " + r.stderr)
    check(len(before) > 10, "segments acknowledged before the backup: %d" % len(before))
    check(len(acked) > len(before), "segments were posted while the backup ran")
    # restore: a fresh instance on the copy
    restored = Instance("restored", free_port(), dest).start()
    rc = restored.client()
    got = {}
    for s in sessions:
        body = rc.request("GET", "/v1/sessions/%s/segments?limit=1000" % s).json()
        items = body.get("segments", body.get("items", []))
        got[s] = [x["id"] for x in items]
    missing = [(s, g) for (s, g) in before if g not in got[s]]
    eq(missing, [], "acknowledged segments missing from the copy")
    # each session of the copy is a prefix of what was posted (no torn state)
    for s in sessions:
        eq(got[s], ["seg-%d" % i for i in range(len(got[s]))], "segments of %s in order" % s)
    # totals of the copy equal a replay of its segments on a fresh server
    fresh = Instance("replay", free_port(), os.path.join(d, "replay.db")).start()
    fc = fresh.client()
    for k, s in enumerate(sessions):
        fc.request("POST", "/v1/sessions", {"id": s, "source_lang": "en", "target_lang": "fr"})
        for i in range(len(got[s])):
            eq(fc.request("POST", "/v1/sessions/%s/segments" % s, segment(i, k)).status, 201,
               "replay " + s)
        eq(_metrics_systems(rc, s), _metrics_systems(fc, s), "totals of %s: copy vs replay" % s)
    for inst in (fresh, restored, src):
        eq(inst.stop(), 0, "clean stop of " + inst.name)
    # usage errors
    eq(subprocess.run([ADAPTMON, "backup", "--db", os.path.join(d, "nope.db"), dest + "2"],
                      capture_output=True).returncode, 1, "backup of a missing database")
    eq(subprocess.run([ADAPTMON, "backup"], capture_output=True).returncode, 2,
       "backup without a destination")


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))

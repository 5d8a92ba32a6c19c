#!/usr/bin/env python3
"""Monitoring files against a live server (issue 29, "Prometheus"):

  * /metrics passes `promtool check metrics` and has adaptmon_build_info and
    the standard process_* metrics with plausible values;
  * deploy/prometheus/adaptmon.rules.yml passes `promtool check rules` and
    its unit tests (`promtool test rules adaptmon.rules.test.yml`);
  * a real Prometheus (Debian's `prometheus` package) scrapes a real server
    with the rules loaded: every rule evaluates without error, and every
    query of deploy/grafana/adaptmon-dashboard.json runs and returns series
    (the 5xx ones may be empty: this server answered none), naming only
    metrics that the live /metrics exposes.

No Grafana is packaged for Debian bookworm or on npm, so the dashboard is
checked as JSON (structure, datasource variable, unique panel ids, grid
within 24 columns) and by its queries, not rendered; test_grafana_schema.py
checks it against Grafana's own schema (@grafana/schema types).
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import ROOT, free_port, have, tmpdir  # noqa: E402
from harness import Server, Skip, check, eq, run_tests  # noqa: E402

RULES = os.path.join(ROOT, "deploy", "prometheus", "adaptmon.rules.yml")
RULES_TEST = os.path.join(ROOT, "deploy", "prometheus", "adaptmon.rules.test.yml")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "adaptmon-dashboard.json")
NAME = re.compile(r"\b((?:adaptmon|process)_[a-z_]+)\b")


def need_promtool():
    if not have("promtool"):
        raise Skip("promtool missing (Debian package prometheus; tools/deps.sh installs it)")


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read().decode("utf-8")


def traffic(srv, sid="m"):
    """Requests that give every series of the dashboard a sample."""
    c = srv.client()
    c.jpost("/v1/sessions", {"id": sid, "source_lang": "en", "target_lang": "fr"})
    c.jpost("/v1/sessions/%s/segments" % sid, {"id": "1", "source": "the virus spreads",
                                        "hypothesis": "le virus se propage",
                                        "translation": "le virus se répand"})
    c.get("/v1/sessions/none")
    c.get("/v1/sessions/%s/metrics" % sid)
    c.close()


def dashboard_queries():
    with open(DASHBOARD, encoding="utf-8") as f:
        d = json.load(f)
    return d, [(p["title"], t["expr"]) for p in d["panels"] for t in p["targets"]]


def test_metrics_exposition():
    need_promtool()
    srv = Server()
    try:
        traffic(srv)
        text = scrape(srv.port)
    finally:
        srv.stop()
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True)
    eq((r.returncode, r.stdout + r.stderr), (0, ""), "promtool check metrics")
    vals = {}
    for ln in text.splitlines():
        if ln and not ln.startswith("#"):
            name, v = ln.rsplit(" ", 1)
            vals[name] = float(v)
    check(re.search(r'(?m)^adaptmon_build_info\{version="\d+\.\d+\.\d+",sqlite_version="3\.[\d.]+"\} 1$',
                    text), "adaptmon_build_info")
    check(0 < vals["process_cpu_seconds_total"] < 600, "cpu seconds %r" % vals)
    check(1e6 < vals["process_resident_memory_bytes"] < 4e9, "rss")
    check(abs(vals["process_start_time_seconds"] - time.time()) < 600, "start time is recent")
    check(5 <= vals["process_open_fds"] < vals["process_max_fds"], "fds")
    eq(vals["adaptmon_ready"], 1.0, "ready")
    check(vals["adaptmon_disk_free_bytes"] > 0, "disk free")
    eq(vals["adaptmon_event_streams_max"], 512.0, "max-streams default")


def test_rules_check_and_unit_tests():
    need_promtool()
    r = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True)
    eq(r.returncode, 0, "promtool check rules:\n" + r.stdout + r.stderr)
    check("SUCCESS: 9 rules found" in r.stdout, r.stdout)
    r = subprocess.run(["promtool", "test", "rules", os.path.basename(RULES_TEST)],
                       cwd=os.path.dirname(RULES_TEST), capture_output=True, text=True)
    eq(r.returncode, 0, "promtool test rules:\n" + r.stdout + r.stderr)


def test_dashboard_json_shape():
    d, queries = dashboard_queries()
    eq(d["uid"], "adaptmon-overview", "uid")
    names = [v["name"] for v in d["templating"]["list"]]
    eq(names, ["datasource", "instance"], "template variables")
    ids = [p["id"] for p in d["panels"]]
    eq(len(ids), len(set(ids)), "unique panel ids")
    for p in d["panels"]:
        g = p["gridPos"]
        check(g["x"] + g["w"] <= 24, "panel %r within the grid" % p["title"])
        eq(p["datasource"], {"type": "prometheus", "uid": "${datasource}"}, "datasource")
        check(p["targets"], "panel %r has queries" % p["title"])
    check(len(queries) >= 20, "queries: %d" % len(queries))
    for want in ("adaptmon_ready", "code=~\"5..\"", "histogram_quantile(0.99",
                 "adaptmon_disk_free_bytes", "adaptmon_event_streams_open"):
        check(any(want in q for _t, q in queries), "a panel shows " + want)


def prom_get(port, path, **params):
    url = "http://127.0.0.1:%d%s?%s" % (port, path, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def test_live_prometheus_runs_rules_and_dashboard_queries():
    if not have("prometheus"):
        raise Skip("prometheus missing (Debian package prometheus)")
    srv = Server()
    d = tmpdir("adaptmon-prom-")
    pport = free_port()
    cfg = os.path.join(d, "prometheus.yml")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "rule_files:\n  - %s\n"
                "scrape_configs:\n  - job_name: adaptmon\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % (RULES, srv.port))
    log = open(os.path.join(d, "prometheus.log"), "wb")
    prom = subprocess.Popen(["prometheus", "--config.file", cfg, "--storage.tsdb.path",
                             os.path.join(d, "data"), "--web.listen-address",
                             "127.0.0.1:%d" % pport], stdout=log, stderr=log)
    try:
        traffic(srv)
        live = set(NAME.findall(scrape(srv.port)))
        deadline = time.monotonic() + 60
        up = []
        while time.monotonic() < deadline:
            try:
                up = prom_get(pport, "/api/v1/query", query='up{job="adaptmon"}')["data"]["result"]
                if up and up[0]["value"][1] == "1":
                    break
            except OSError:
                pass
            time.sleep(0.5)
        check(up and up[0]["value"][1] == "1", "Prometheus scrapes the server: %r" % up)
        traffic(srv, "m2")
        time.sleep(5)  # a few scrapes and rule evaluations
        groups = prom_get(pport, "/api/v1/rules")["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        eq(len(rules), 9, "rules loaded")
        for r in rules:
            eq((r["name"], r["health"], r.get("lastError", "")), (r["name"], "ok", ""),
               "rule evaluates")
            check(set(NAME.findall(r["query"])) <= live | {"up"},
                  "rule %s names live metrics only: %r" % (r["name"],
                                                            set(NAME.findall(r["query"])) - live))
        # nothing fires; the disk rule may be pending: predict_linear over the
        # few seconds of samples here extrapolates this machine's other
        # writers (its `for: 15m` is what keeps that from paging)
        eq([r["name"] for r in rules if r["state"] == "firing"], [], "no alert fires")
        eq([r["name"] for r in rules if r["state"] == "pending"
            and r["name"] != "AdaptmonDiskFillingUp"], [], "no alert pending")
        _d, queries = dashboard_queries()
        for title, q in queries:
            names = set(NAME.findall(q))
            check(names and names <= live, "%r names live metrics: %r" % (title, names - live))
            expr = q.replace("$__rate_interval", "1m").replace("$instance", ".*")
            res = prom_get(pport, "/api/v1/query", query=expr)
            eq(res["status"], "success", "query of %r" % title)
            if 'code=~"5.."' not in q:
                check(res["data"]["result"], "%r has data: %s" % (title, expr))
    finally:
        prom.terminate()
        prom.wait(30)
        log.close()
        srv.stop()


if __name__ == "__main__":
    sys.exit(run_tests(globals()))

#!/usr/bin/env python3
"""deploy/grafana/adaptmon-dashboard.json against Grafana's own schema
(issue 29, "a ready-made Grafana dashboard JSON").

Grafana's dashboard schema is CUE inside the grafana repository; what it
publishes from it is TypeScript: @grafana/schema (the dashboard model and
every core panel plugin's Options/FieldConfig; it ships no JSON Schema and
no CUE) and @grafana/grafana-foundation-sdk (the data sources' query types,
Prometheus among them). tests/fleet/grafana_dashboard.ts narrows the dashboard
model per panel plugin (see its comment); this test writes the dashboard as an
object literal `... satisfies AdaptmonDashboard` and compiles it with
`tsc --strict --exactOptionalPropertyTypes`. Checking a literal is what makes
misspelled fields count (TypeScript checks excess properties only on fresh
literals, not on an imported JSON module), so the same compile also gets
broken copies of the dashboard, each of which must fail where it is broken.
Packages are pinned in tests/fleet/package.json (`npm ci --prefix tests/fleet`).

Rendering it was tried and is not possible here: Debian bookworm has no
grafana package (`apt-cache search grafana`: ceph's dashboards and Go
libraries only), npm has no Grafana server (`grafana` there is an empty
name-holder that points to @types/grafana; @grafana/* are the front-end libraries, @grafana/scenes and
@grafana/ui need a running Grafana backend and a bundler; the 67 npm names
with "grafana" in tools' package lists are plugins, SDKs and clients), the
docker client has no daemon to run grafana/grafana with, and grafana.com's
binaries are not reachable (only the npm registry is). So the dashboard is checked here against the
schema, and by its queries against a live Prometheus scraping a live server
in test_monitoring.py (test_live_prometheus_runs_rules_and_dashboard_queries).
"""
import copy
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import ROOT, have, tmpdir  # noqa: E402
from harness import Skip, check, eq, run_tests  # noqa: E402

HERE = os.path.join(ROOT, "tests", "fleet")
TSC = os.path.join(HERE, "node_modules", ".bin", "tsc")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "adaptmon-dashboard.json")
TYPES = os.path.join(HERE, "grafana_dashboard")


def need_tsc():
    if not os.path.exists(TSC) and have("npm"):
        subprocess.run(["npm", "ci", "--prefix", HERE, "--no-audit", "--no-fund",
                        "--loglevel=error"], capture_output=True, timeout=600)
    if not os.path.exists(TSC):
        raise Skip("typescript missing and `npm ci --prefix tests/fleet` failed")


def load():
    with open(DASHBOARD, encoding="utf-8") as f:
        return json.load(f)


def panel(d, ptype):
    return next(p for p in d["panels"] if p["type"] == ptype)


def _misspelled_panel_field(d):
    p = d["panels"][0]
    p["gridpos"] = p.pop("gridPos")


def _wrong_type_grid_width(d):
    d["panels"][0]["gridPos"]["w"] = "4"


def _unknown_panel_plugin(d):
    d["panels"][6]["type"] = "graph"  # the Angular panel Grafana 11 removed


def _misspelled_stat_option(d):
    panel(d, "stat")["options"]["textMod"] = "name"


def _bad_stat_option_value(d):
    panel(d, "stat")["options"]["colorMode"] = "rainbow"


def _misspelled_timeseries_custom(d):
    panel(d, "timeseries")["fieldConfig"]["defaults"]["custom"] = {"lineWidht": 2}


def _bad_legend_mode(d):
    panel(d, "timeseries")["options"]["legend"] = {"displayMode": "lst"}


def _query_without_expr(d):
    t = d["panels"][0]["targets"][0]
    t["exp"] = t.pop("expr")


def _query_without_refid(d):
    del d["panels"][0]["targets"][0]["refId"]


def _variable_refresh_as_text(d):
    d["templating"]["list"][1]["refresh"] = "2"


def _variable_current_empty(d):
    # what the dashboard had before: Grafana writes `"current": {}`, but its
    # schema requires text and value in a VariableOption
    d["templating"]["list"][0]["current"] = {}


def _no_schema_version(d):
    del d["schemaVersion"]


def _misspelled_dashboard_field(d):
    d["refesh"] = d.pop("refresh")


# name -> (mutation, a string the compiler's message for that file must name)
BROKEN = {
    "misspelled_panel_field": (_misspelled_panel_field, '"gridpos"'),
    "wrong_type_grid_width": (_wrong_type_grid_width, "'string' is not assignable to type 'number'"),
    "unknown_panel_plugin": (_unknown_panel_plugin, '"graph"'),
    "misspelled_stat_option": (_misspelled_stat_option, '"textMod"'),
    "bad_stat_option_value": (_bad_stat_option_value, '"rainbow"'),
    "misspelled_timeseries_custom": (_misspelled_timeseries_custom, '"lineWidht"'),
    "bad_legend_mode": (_bad_legend_mode, '"lst"'),
    "query_without_expr": (_query_without_expr, '"exp"'),
    "query_without_refid": (_query_without_refid, "Property 'refId' is missing"),
    "variable_refresh_as_text": (_variable_refresh_as_text, "'VariableRefresh'"),
    "variable_current_empty": (_variable_current_empty, "text, value"),
    "no_schema_version": (_no_schema_version, "schemaVersion"),
    "misspelled_dashboard_field": (_misspelled_dashboard_field, '"refesh"'),
}


def write_case(d, name, dash):
    path = os.path.join(d, name + ".ts")
    with open(path, "w", encoding="utf-8") as f:
        f.write('import type { AdaptmonDashboard } from %s;\n' % json.dumps(TYPES))
        f.write("export const dashboard = %s satisfies AdaptmonDashboard;\n"
                % json.dumps(dash, indent=2, ensure_ascii=False))
    return path


def compile_cases(cases):
    """Compile every case in one tsc run (tsc takes ~20 s to load Grafana's
    types here); return {case name: [error lines]}."""
    d = tmpdir("adaptmon-grafana-")
    files = [write_case(d, name, dash) for name, dash in cases.items()]
    r = subprocess.run([TSC, "--noEmit", "--pretty", "false", "--strict",
                        "--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess",
                        "--target", "es2022", "--module", "esnext",
                        "--moduleResolution", "bundler"] + files,
                       capture_output=True, text=True, timeout=600)
    errors = {name: [] for name in cases}
    other = []
    last = other
    for ln in r.stdout.splitlines():
        m = re.match(r"(?:.*/)?([a-z_]+)\.ts\(\d+,\d+\): error ", ln)
        if ln.startswith(" ") and last:
            last[-1] += "\n" + ln  # the indented detail of the error above
            continue
        last = errors[m.group(1)] if m and m.group(1) in errors else other
        last.append(ln)
    eq(other, [], "tsc reports only about the dashboard files (types compile clean)")
    eq(r.returncode != 0, any(errors.values()), "tsc exit status agrees: " + r.stderr)
    return errors


def test_dashboard_satisfies_grafana_schema_and_broken_copies_do_not():
    """The dashboard compiles against Grafana's types without an error; each
    broken copy fails, naming what is broken."""
    need_tsc()
    dash = load()
    cases = {"dashboard": dash}
    for name, (mutate, _want) in BROKEN.items():
        broken = copy.deepcopy(dash)
        mutate(broken)
        check(broken != dash, "%s changes the dashboard" % name)
        cases[name] = broken
    errors = compile_cases(cases)
    eq(errors["dashboard"], [], "deploy/grafana/adaptmon-dashboard.json against Grafana's schema")
    for name, (_mutate, want) in BROKEN.items():
        check(errors[name], "the compile fails on the broken copy %s" % name)
        check(any(want in e for e in errors[name]),
              "%s: an error names %s:\n%s" % (name, want, "\n".join(errors[name])))


def test_panels_tile_the_grid():
    """What the schema cannot say: Grafana's grid is 24 columns wide and
    moves overlapping panels down, so the layout is only what the file says
    when no two panels share a cell and every panel is inside the grid."""
    cells = {}
    for p in load()["panels"]:
        g = p["gridPos"]
        check(g["x"] >= 0 and g["y"] >= 0 and g["w"] > 0 and g["h"] > 0
              and g["x"] + g["w"] <= 24, "%r inside the grid: %r" % (p["title"], g))
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                eq(cells.get((x, y)), None, "%r overlaps at %r" % (p["title"], (x, y)))
                cells[(x, y)] = p["title"]


def test_types_pin_grafana_versions():
    """The check runs against the pinned packages, not whatever npm resolves
    today (a new Grafana schema is a deliberate update of package.json)."""
    with open(os.path.join(HERE, "package.json"), encoding="utf-8") as f:
        deps = json.load(f)["dependencies"]
    for pkg in ("@grafana/schema", "@grafana/grafana-foundation-sdk", "typescript"):
        check(re.fullmatch(r"\d+\.\d+\.\d+", deps.get(pkg, "")), "%s pinned: %r" % (pkg, deps))
    with open(os.path.join(HERE, "package-lock.json"), encoding="utf-8") as f:
        lock = json.load(f)["packages"]
    for pkg in ("@grafana/schema", "@grafana/grafana-foundation-sdk", "typescript"):
        eq(lock["node_modules/" + pkg]["version"], deps[pkg], "lock agrees for " + pkg)


if __name__ == "__main__":
    sys.exit(run_tests(globals()))

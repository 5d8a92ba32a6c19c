"""The PostgreSQL schema and statements against SQLite's (DESIGN-postgres.md
§2.1, §2.2, §2.7).

Starts a throwaway PostgreSQL on loopback (initdb + pg_ctl in a temporary
directory, as the user "nobody" when run as root; skipped with a message when
the server binaries are absent: tools/deps.sh installs postgresql-15),
applies schema/pg/, applies schema/*.sql to a temporary SQLite file, and
compares the two introspected schemas: tables, columns (types mapped,
NOT NULL, defaults), primary keys, indexes (unique or not), foreign keys.
Then PREPAREs every statement of server/store/sql_pg.h against it, which
catches syntax and type errors, and checks each one's parameter count.
Also fails when schema/pg/ stops below the highest schema/NNN_*.sql (checked
without a server too). Prints "N passed, N failed"; exits 1 on a failure.
"""
import glob
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pgutil import Server, bindir as pg_bindir  # noqa: E402  (the throwaway PostgreSQL of every PG test)

TYPES = {"INTEGER": "bigint", "TEXT": "text"}  # SQLite declared type -> PostgreSQL
TX_STMTS = ("BEGIN_IMM", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "ROLLBACK_TO")

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))


def sqlite_schema(path):
    db = sqlite3.connect(path)
    for f in sorted(glob.glob(os.path.join(ROOT, "schema", "*.sql"))):
        db.executescript(open(f, encoding="utf-8").read())
    out = {}
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for t in tables:
        cols, pk = {}, []
        for cid, name, typ, notnull, dflt, pkpos in db.execute("PRAGMA table_info(%s)" % t):
            cols[name] = {"type": TYPES.get(typ.upper(), "?" + typ),
                          "notnull": bool(notnull) or pkpos > 0, "default": dflt}
            if pkpos:
                pk.append((pkpos, name))
        idx = []
        for _, name, unique, origin, _partial in db.execute("PRAGMA index_list(%s)" % t):
            if origin == "pk":
                continue
            c = [r[2] for r in db.execute("PRAGMA index_info(%s)" % name)]
            idx.append([bool(unique), c])
        fks = [[r[3], r[2], r[4], r[6]] for r in db.execute("PRAGMA foreign_key_list(%s)" % t)]
        out[t] = {"columns": cols, "pk": [n for _, n in sorted(pk)], "indexes": sorted(idx),
                  "fks": sorted(fks)}
    db.close()
    return out


PG_INTROSPECT = r"""
SELECT json_object_agg(t.relname, json_build_object(
  'columns', (SELECT json_object_agg(a.attname, json_build_object(
       'type', format_type(a.atttypid, a.atttypmod), 'notnull', a.attnotnull,
       'default', pg_get_expr(d.adbin, d.adrelid)))
     FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped),
  'pk', (SELECT json_agg(a.attname ORDER BY k.ord) FROM pg_index i,
            unnest(i.indkey) WITH ORDINALITY k(num, ord), pg_attribute a
         WHERE i.indrelid = t.oid AND i.indisprimary AND a.attrelid = t.oid AND a.attnum = k.num),
  'indexes', (SELECT coalesce(json_agg(json_build_array(i.indisunique,
                 (SELECT json_agg(a.attname ORDER BY k.ord) FROM unnest(i.indkey)
                    WITH ORDINALITY k(num, ord), pg_attribute a
                  WHERE a.attrelid = t.oid AND a.attnum = k.num))), '[]')
              FROM pg_index i WHERE i.indrelid = t.oid AND NOT i.indisprimary),
  'fks', (SELECT coalesce(json_agg(json_build_array(
              (SELECT attname FROM pg_attribute WHERE attrelid = t.oid AND attnum = c.conkey[1]),
              f.relname,
              (SELECT attname FROM pg_attribute WHERE attrelid = c.confrelid
                 AND attnum = c.confkey[1]),
              CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'a' THEN 'NO ACTION'
                WHEN 'r' THEN 'RESTRICT' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END)), '[]')
          FROM pg_constraint c JOIN pg_class f ON f.oid = c.confrelid
          WHERE c.conrelid = t.oid AND c.contype = 'f')))
FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = 'public' AND t.relkind = 'r';
"""


def pg_schema(srv):
    rc, out, err = srv.psql(PG_INTROSPECT)
    if rc:
        raise RuntimeError(err)
    s = json.loads(out)
    # defaults compare as written: SQLite's "0" and PostgreSQL's bigint
    # default 0 are both "0"; an identity column has none, as SQLite's rowid
    for t in s.values():
        t["pk"] = t["pk"] or []
        t["indexes"] = sorted(t["indexes"])
        t["fks"] = sorted(t["fks"])
    return s


def statements():
    """(name, PostgreSQL text) of every AM_PG_STMTS entry, in order, printed by a
    small C program built against sql_pg.h."""
    d = tempfile.mkdtemp(prefix="am-sqlpg-")
    try:
        src = os.path.join(d, "p.c")
        with open(src, "w") as f:
            f.write('#include <stdio.h>\n#include "sql_pg.h"\n'
                    '#define P(name, sql) printf("%s\\x1f%s\\x1e", #name, sql);\n'
                    "int main(void) { P(MIGRATIONS_TABLE, AM_PG_SQL_MIGRATIONS_TABLE) "
                    "AM_PG_STMTS(P) return 0; }\n")
        subprocess.run(["cc", "-std=c11", "-I", os.path.join(ROOT, "server", "store"), "-o",
                        os.path.join(d, "p"), src], check=True)
        out = subprocess.run([os.path.join(d, "p")], check=True, capture_output=True,
                             text=True).stdout
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return [tuple(r.split("\x1f", 1)) for r in out.split("\x1e") if r]


def compare(lite, pg):
    check("the same tables", sorted(lite) == sorted(pg),
          "SQLite only %s, PostgreSQL only %s" % (sorted(set(lite) - set(pg)),
                                                   sorted(set(pg) - set(lite))))
    for t in sorted(set(lite) & set(pg)):
        a, b = lite[t], pg[t]
        check(t + ": columns", a["columns"] == b["columns"],
              json.dumps({k: (a["columns"].get(k), b["columns"].get(k))
                          for k in set(a["columns"]) | set(b["columns"])
                          if a["columns"].get(k) != b["columns"].get(k)}))
        check(t + ": primary key", a["pk"] == b["pk"], "%s vs %s" % (a["pk"], b["pk"]))
        # a SQLite UNIQUE column is an index of origin 'u'; in PostgreSQL a
        # UNIQUE constraint's index: both are unique indexes here
        check(t + ": indexes", a["indexes"] == b["indexes"],
              "%s vs %s" % (a["indexes"], b["indexes"]))
        check(t + ": foreign keys", a["fks"] == b["fks"], "%s vs %s" % (a["fks"], b["fks"]))


def prepare_all(srv, stmts):
    """stmts[0] is the migrations' table, which the runner creates first."""
    rc, _, err = srv.psql(stmts[0][1] + ";")
    check("create schema_migrations", rc == 0, err.strip())
    stmts = stmts[1:]
    script = []
    for name, sql in stmts:
        if name not in TX_STMTS:
            script.append("PREPARE s_%s AS %s;" % (name.lower(), sql))
    script.append("SELECT upper(substr(name, 3)) || ' ' || cardinality(parameter_types) "
                  "FROM pg_prepared_statements;")
    rc, out, err = srv.psql("\n".join(script) + "\n", stop=False)
    got = dict(line.rsplit(" ", 1) for line in out.split("\n") if line)
    for name, sql in stmts:
        if name in TX_STMTS:
            continue
        want = max([int(k) for k in re.findall(r"\$(\d+)", sql)] or [0])
        if name not in got:
            _, _, e = srv.psql("PREPARE s AS %s;" % sql)
            check("PREPARE " + name, False, e.strip())
        else:
            check("PREPARE " + name, int(got[name]) == want,
                  "%s parameters, %d in the text" % (got[name], want))
    tx = dict(stmts)
    seq = [tx["BEGIN_IMM"], tx["SAVEPOINT"], tx["RELEASE"], tx["SAVEPOINT"], tx["ROLLBACK_TO"],
           tx["ROLLBACK"], tx["BEGIN_IMM"], tx["COMMIT"]]
    rc, _, err = srv.psql(";\n".join(seq) + ";\n")
    check("transaction statements", rc == 0 and "WARNING" not in err, err.strip())


def version(pattern):
    """The highest NNN of the files NNN_*.sql matching pattern, 0 for none."""
    v = [int(os.path.basename(f)[:3]) for f in glob.glob(pattern)
         if re.match(r"\d{3}_", os.path.basename(f))]
    return max(v or [0])


def main():
    # without a server too: every schema/NNN_*.sql needs its schema/pg/ file
    lite_v = version(os.path.join(ROOT, "schema", "*.sql"))
    pg_v = version(os.path.join(ROOT, "schema", "pg", "*.sql"))
    check("schema/pg/ reaches schema version %d" % lite_v, pg_v == lite_v,
          "schema/pg/ ends at %d" % pg_v)
    bindir = pg_bindir()
    if not bindir:
        print("SKIP: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb); "
              "tools/deps.sh installs postgresql-15")
        print("%d passed, %d failed, 1 skipped" % (passed, failed))
        return 1 if failed else 0
    srv = Server(bindir)
    tmp = tempfile.mkdtemp(prefix="am-lite-")
    try:
        for f in sorted(glob.glob(os.path.join(ROOT, "schema", "pg", "*.sql"))):
            rc, _, err = srv.psql(open(f, encoding="utf-8").read())
            check("apply " + os.path.relpath(f, ROOT), rc == 0, err.strip())
        compare(sqlite_schema(os.path.join(tmp, "s.db")), pg_schema(srv))
        prepare_all(srv, statements())
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

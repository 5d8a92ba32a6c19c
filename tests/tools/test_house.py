#!/usr/bin/env python3
"""tests/tools/test_house.py — tools/house.py on a small tree of its own:
it must name an import circle (a symbol-level one, not an #include) with
the symbols on each edge, stay quiet about a one-way use, and flag a long
file only when its first lines give no reason. Ends with
"N passed, N failed"; APITEST_ONLY=<substring> selects cases by name."""
import os
import subprocess
import sys
import tempfile

HOUSE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "house.py")


def build(root, files):
    """Writes files ({path: text}) under root and compiles each .c into
    root/build/<path>.o, as the Makefile lays objects out."""
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
        if path.endswith(".c"):
            obj = os.path.join(root, "build", path[:-2] + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run(["cc", "-c", "-o", obj, full], check=True)


def house(root, *args):
    p = subprocess.run([sys.executable, HOUSE, *args], cwd=root, capture_output=True, text=True)
    return p.returncode, p.stdout


def test_circle_named_with_its_symbols():
    with tempfile.TemporaryDirectory() as d:
        build(d, {"core/a.c": "int b(void);\nint a(void) { return b(); }\n",
                  "core/b.c": "int a(void);\nint b(void) { return 1; }\nint c(void) { return a(); }\n"})
        rc, out = house(d)
        assert rc == 1, out
        assert "import circle: core/a.c <-> core/b.c" in out, out
        assert "core/a.c uses core/b.c: b" in out, out
        assert "core/b.c uses core/a.c: a" in out, out


def test_one_way_use_is_no_circle():
    with tempfile.TemporaryDirectory() as d:
        build(d, {"core/a.c": "int b(void);\nint a(void) { return b(); }\n",
                  "core/b.c": "struct s { int x; };\nint b(void) { return 1; }\n"})
        rc, out = house(d)
        assert rc == 0 and "circle" not in out, out


def test_three_file_loop():
    with tempfile.TemporaryDirectory() as d:
        build(d, {"server/x.c": "int y(void);\nint x(void) { return y(); }\n",
                  "server/y.c": "int z(void);\nint y(void) { return z(); }\n",
                  "server/z.c": "int x(void);\nint z(void) { return x(); }\n"})
        rc, out = house(d)
        assert rc == 1 and "server/x.c <-> server/y.c <-> server/z.c" in out, out


def test_long_file_needs_a_reason():
    body = "int a(void) { return 0; }\n" + "/* filler */\n" * 20
    with tempfile.TemporaryDirectory() as d:
        build(d, {"core/a.c": body,
                  "core/r.c": "/* over 1,000 lines because it is one table. */\n" + body})
        rc, out = house(d, "--max-lines", "10")
        assert rc == 1, out
        assert "core/a.c: 21 lines" in out, out
        assert "core/r.c" not in out, out
        rc, out = house(d, "--max-lines", "100")
        assert rc == 0, out


def test_no_build_directory_is_an_error():
    with tempfile.TemporaryDirectory() as d:
        rc, _out = house(d)
        assert rc == 2


def main():
    only = os.environ.get("APITEST_ONLY", "")
    ok = bad = 0
    for name, fn in sorted(globals().items()):
        if not name.startswith("test_") or only not in name:
            continue
        try:
            fn()
            print("ok     %s" % name)
            ok += 1
        except AssertionError as e:
            print("FAIL   %s: %s" % (name, e))
            bad += 1
    print("%d passed, %d failed" % (ok, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

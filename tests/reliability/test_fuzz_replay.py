#!/usr/bin/env python3
"""Replays the seed corpus of every fuzz harness (fuzz/corpus/<name>/)
through its replay build ($BUILD/fuzz/replay_<name>, built by `make unit`
with the same compiler and sanitizers as the rest of $BUILD; under
tests/run.sh VALGRIND=1 each replay runs under valgrind). Every input must
run without a crash, a sanitizer report or a valgrind error, and every
harness must have a non-empty corpus. `make fuzz` runs the same harnesses
under libFuzzer for a while (tests/RELIABILITY.md).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import ROOT  # noqa: E402
from harness import check, eq, run_tests  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
FUZZ = os.path.join(ROOT, "fuzz")


def harnesses():
    return sorted(f[len("fuzz_"):-2] for f in os.listdir(FUZZ)
                  if f.startswith("fuzz_") and f.endswith(".c"))


def _replay(name):
    binary = os.path.join(ROOT, BUILD, "fuzz", "replay_" + name)
    check(os.access(binary, os.X_OK), "%s is not built (make unit)" % binary)
    corpus = os.path.join(FUZZ, "corpus", name)
    n = len([f for f in os.listdir(corpus) if not f.startswith(".")])
    check(n > 0, "empty corpus %s" % corpus)
    cmd = [binary, corpus]
    if os.environ.get("VALGRIND") == "1":
        cmd = ["valgrind", "--error-exitcode=99", "--leak-check=full",
               "--errors-for-leak-kinds=definite", "--quiet"] + cmd
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        raise AssertionError("replay of %s exited %d:\n%s" % (name, p.returncode, out[-4000:]))
    eq(p.stdout.strip().splitlines()[-1], "replayed %d inputs" % n, "inputs replayed")
    check("runtime error" not in out and "ERROR: AddressSanitizer" not in out,
          "sanitizer report:\n" + out[-4000:])
    print("# %s: %d inputs" % (name, n))


def _make(name):
    return lambda: _replay(name)


for _n in harnesses():
    globals()["test_replay_" + _n] = _make(_n)


def test_every_harness_has_a_corpus():
    names = harnesses()
    check(len(names) >= 7, "harnesses: %r" % names)
    for n in names:
        check(os.path.isdir(os.path.join(FUZZ, "corpus", n)), "no corpus for %s" % n)


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))

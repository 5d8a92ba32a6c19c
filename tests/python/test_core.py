#!/usr/bin/env python3
"""The Python package (python/adaptmon) against `adaptmon score --json` and
the golden files.

* identity: the same inputs through adaptmon.corpus_score / score_files and
  through the ./adaptmon binary give the same JSON, number for number
  (TICO-19 as plain lists and as WMT SGML, the multilingual sets);
* golden: data/golden/*.json through Python (tests/cli/test_multilingual.py's
  own checks, its `score` pointed at the Python API; TICO-19's sacreBLEU and
  rk.rb values), no number copied here;
* errors carry the CLI's message; threads; Session equal to the live
  service's answers; a wheel built and installed into a fresh venv.

The extension is built first (python/setup.py build_ext --inplace, with the
interpreter running this file: the one `make test` uses). Ends with
"N passed, N failed".
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
from harness import (ADAPTMON, DATA, DEV, ROOT, base, check, eq, run_tests,  # noqa: E402
                     serve, shutdown, tico19)

PYDIR = os.path.join(ROOT, "python")
SGM_SRC = os.path.join(DEV, "dev.en-fr.en.sgm")
SGM_REF = os.path.join(DEV, "dev.en-fr.fr.sgm")
SGM_HYP = os.path.join(DEV, "en-fr.dev.txt.truecased.sgm")
TEXT = os.path.join(DEV, "text")
GLOSSARY = os.path.join(DATA, "glossaries", "tico19", "f_en-fr_XX.csv")
with open(os.path.join(DATA, "golden", "tico19-enfr-dev.json"), encoding="utf-8") as _f:
    GOLD = json.load(_f)

am = None  # the adaptmon module, imported by setup()


def setup():
    global am
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=PYDIR,
                   check=True, stdout=subprocess.DEVNULL)
    sys.path.insert(0, PYDIR)
    import adaptmon
    am = adaptmon


def cli_json(*args):
    p = subprocess.run([ADAPTMON, "score", *args, "--json"], capture_output=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError("adaptmon score: exit %d: %s" % (p.returncode, p.stderr.decode()))
    return json.loads(p.stdout)


def lines(name):
    with open(os.path.join(TEXT, name), encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


# ---- identity with the CLI -------------------------------------------------

def test_tico_plain_lists_equal_cli():
    src, ref, hyp = lines("source.en"), lines("ref.fr"), lines("baseline.fr")
    got = am.corpus_score({"baseline": hyp}, ref, src, target_lang="fr", glossary=GLOSSARY,
                          per_segment=True)
    want = cli_json("--target-lang", "fr", "--glossary", GLOSSARY, "--per-segment",
                    "--src", os.path.join(TEXT, "source.en"), "--ref", os.path.join(TEXT, "ref.fr"),
                    "--hyp", "baseline=" + os.path.join(TEXT, "baseline.fr"))
    eq(got.json, want, "corpus_score JSON")
    s = got.systems["baseline"]
    eq((s.r0.hits, s.r0.total, s.r0.score), tuple(want["systems"]["baseline"]["r0"].values()), "r0")
    eq(s.bleu, want["systems"]["baseline"]["bleu"], "bleu")
    check(s.terms["instances"] > 0, "glossary terms found")
    eq(got.signature, want["signature"], "signature")


def test_tico_sgml_and_options_equal_cli():
    args = ["--profile", "simianer2019", "--stopwords", "iso", "--target-lang", "fr",
            "--sgm-src", SGM_SRC, "--sgm-ref", SGM_REF, "--sgm-hyp", "Fairseq=" + SGM_HYP,
            "--glossary", GLOSSARY, "--k-max", "3", "--tokenize", "intl"]
    eq(am.score_files(*args).json, cli_json(*args), "score_files JSON")


def test_multilingual_sets_equal_cli_and_golden():
    """tests/cli/test_multilingual.py's golden checks with its `score`
    pointed at the Python API, each run also compared with the binary."""
    spec = importlib.util.spec_from_file_location(
        "cli_multilingual", os.path.join(os.path.dirname(HERE), "cli", "test_multilingual.py"))
    tm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tm)

    def py_score(args):
        d = am.score_files(*args).json
        eq(d, cli_json(*args), "identity %r" % (args,))
        return d
    tm.score = py_score
    n = 0
    for case in tm.GOLD["corpus"]:
        tm.check_corpus(case)
        n += 1
    for case in tm.GOLD["sentence"]:
        tm.check_sentence(case)
        n += 1
    check(n > 50, "multilingual golden cases run: %d" % n)


def _through_python(name):
    """tests/cli/NAME.py with its `run` (adaptmon score ARGS -> status,
    stdout, stderr) pointed at the extension: every one of its tests (the
    golden files tico19-enfr-dev.json, seeds.json, significance.json…)
    then scores in process. A run reading stdin ('-') stays a process."""
    spec = importlib.util.spec_from_file_location(
        "cli_" + name, os.path.join(os.path.dirname(HERE), "cli", name + ".py"))
    tm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tm)
    orig = tm.run
    calls = [0]

    def run(*args, check=True, timeout=None):
        if "-" in args:
            return orig(*args, check=check)
        calls[0] += 1
        status, out, err = am._core.run(list(args))
        if check and status != 0:
            raise AssertionError("exit %d: %s" % (status, err))
        return status, out, err
    tm.run = run
    failed = []
    for fname, fn in sorted(vars(tm).items()):
        if fname.startswith("test_") and callable(fn):
            try:
                fn()
            except Exception as e:  # collected, reported together
                failed.append("%s: %s" % (fname, str(e)[:300]))
    eq(failed, [], "%s through Python" % name)
    check(calls[0] > 10, "%s: %d in-process runs" % (name, calls[0]))


def test_cli_score_suite_through_python():
    _through_python("test_score")


def test_cli_signif_suite_through_python():
    _through_python("test_signif")


# ---- golden values through Python -------------------------------------------

def test_tico_golden_sacrebleu_and_rk():
    segs = tico19()
    hyp = [s["hypothesis"] for s in segs]
    ref = [s["translation"] for s in segs]
    r = am.corpus_score({"Fairseq": hyp}, ref, target_lang="fr", profile="simianer2019",
                        stopwords="iso")
    s = r.systems["Fairseq"]
    g = GOLD["simianer2019_rk.rb"]
    eq([s.r0.hits, s.r0.total], g["r0"], "R0")
    eq([s.r1.hits, s.r1.total], g["r1"], "R1")
    eq([s.r01.hits, s.r01.total], g["r01"], "R0+1")
    g = GOLD["sacrebleu_2.6.0"]
    eq(s.bleu, g["bleu"], "BLEU")
    eq(r.sacrebleu["bleu"], g["bleu_signature"], "BLEU signature")
    eq(s.chrf, g["chrf2"], "chrF2")
    eq(s.chrfpp, g["chrf2pp"], "chrF2++")
    eq(r.segments, GOLD["segments"], "segments")


def test_paired_bootstrap_equals_cli_and_is_seeded():
    src, ref, hyp = lines("source.en")[:200], lines("ref.fr")[:200], lines("baseline.fr")[:200]
    systems = {"base": hyp, "ref": ref}
    got = am.paired_bootstrap(systems, ref, src, target_lang="fr", n=100, seed=7)
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, segs in (("s", src), ("r", ref), ("h", hyp)):
            paths[name] = os.path.join(tmp, name)
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write("".join(x + "\n" for x in segs))
        want = cli_json("--target-lang", "fr", "--src", paths["s"], "--ref", paths["r"],
                        "--hyp", "base=" + paths["h"], "--hyp", "ref=" + paths["r"],
                        "--paired-bs", "--n-bootstrap", "100", "--seed", "7")
    eq(got, want["significance"], "paired bootstrap")
    eq(got["seed"], 7, "seed")
    other = am.paired_bootstrap(systems, ref, src, target_lang="fr", n=100, seed=8)
    check(other != got, "another seed resamples differently")
    ar = am.paired_randomization(systems, ref, src, target_lang="fr", n=200)
    eq(ar["test"], "paired-ar", "AR test name")


# ---- errors -----------------------------------------------------------------

def test_errors_carry_the_cli_message():
    try:
        am.corpus_score(["a b"], ["a b"], target_lang="fr", tokenize="spm")
    except am.AdaptmonError as e:
        p = subprocess.run([ADAPTMON, "score", "--ref", "/dev/null", "--hyp", "/dev/null",
                            "--target-lang", "fr", "--tokenize", "spm"], capture_output=True)
        want = p.stderr.decode().strip()
        check(want.startswith("adaptmon score: "), "CLI message: %r" % want)
        eq(str(e), want[len("adaptmon score: "):], "message")
        eq(e.status, p.returncode, "status")
    else:
        raise AssertionError("no exception")
    # Unequal lengths are named by the caller's arguments, not by the
    # temporary files the CLI reads (a 971-segment system against 970
    # translations once said "/tmp/adaptmon-py-…/hyp.0 has 971 lines …").
    for call, want in ((lambda: am.corpus_score({"mt": ["a", "b"]}, ["a"], target_lang="fr"),
                        "hypotheses['mt'] has 2 segments but translation has 1"),
                       (lambda: am.corpus_score(["a"], ["a"], ["x", "y"], target_lang="fr"),
                        "sources has 2 segments but translation has 1"),
                       (lambda: am.corpus_score(["a"], ["a"], references=[["a", "b"]],
                                                target_lang="fr"),
                        "references[0] has 2 segments but translation has 1")):
        try:
            call()
        except am.AdaptmonError as e:
            eq(str(e), want, "length message")
            eq(e.status, 1, "length status")
        else:
            raise AssertionError("accepted unequal lengths: " + want)
    for bad in (lambda: am.corpus_score(["a"], ["a", "b"], target_lang="fr"),
                lambda: am.corpus_score(["a\nb"], ["a"], target_lang="fr"),
                lambda: am.corpus_score("abc", ["a"], target_lang="fr")):
        try:
            bad()
        except (ValueError, TypeError):
            continue
        raise AssertionError("accepted bad input")


def test_threads_score_concurrently_and_equal():
    src, ref, hyp = lines("source.en"), lines("ref.fr"), lines("baseline.fr")
    want = am.corpus_score(hyp, ref, src, target_lang="fr").json
    results, errors = [], []

    def work(i):
        try:
            results.append(am.corpus_score(hyp, ref, src, target_lang="fr").json)
        except Exception as e:  # reported below
            errors.append(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    eq(errors, [], "thread errors")
    eq(len(results), 4, "results")
    for r in results:
        eq(r, want, "thread result")


def _blocked_call(tmp, hyp_path):
    """Starts a thread whose core call blocks inside C reading a FIFO given
    as its reference, and returns once the call is there (a non-blocking
    open for writing succeeds only when a reader has the FIFO open). The
    call stays blocked until release(text) writes the reference and closes
    the FIFO. Returns (thread, result list, release)."""
    import time
    fifo = os.path.join(tmp, "ref.fifo")
    os.mkfifo(fifo)
    res = []
    t = threading.Thread(target=lambda: res.append(
        am._core.run(["--ref", fifo, "--hyp", hyp_path, "--target-lang", "fr", "--json"])))
    t.start()
    deadline = time.monotonic() + 60
    while True:
        try:
            wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:  # ENXIO: no reader yet
            if time.monotonic() > deadline:
                raise AssertionError("the core call never opened its reference")
            time.sleep(0.005)
    os.set_blocking(wfd, True)

    def release(text):
        try:
            os.write(wfd, text.encode("utf-8"))
        finally:
            os.close(wfd)
        t.join(120)
    return t, res, release


def test_two_core_calls_run_at_once():
    """While one core call is blocked inside C (reading a FIFO), a second
    call on another thread runs to its end: the calls overlap. With calls
    serialized (the old fd-redirection lock) the second waits for the
    first and the 60 s join times out. Both results equal the CLI's."""
    ref, hyp = lines("ref.fr"), lines("baseline.fr")
    with tempfile.TemporaryDirectory() as tmp:
        hyp_path = os.path.join(tmp, "hyp.txt")
        with open(hyp_path, "w", encoding="utf-8") as f:
            f.write("\n".join(hyp) + "\n")
        ref_path = os.path.join(tmp, "ref.txt")
        with open(ref_path, "w", encoding="utf-8") as f:
            f.write("\n".join(ref) + "\n")
        ta, ra, release = _blocked_call(tmp, hyp_path)
        try:
            rb = []
            tb = threading.Thread(target=lambda: rb.append(am._core.run(
                ["--ref", ref_path, "--hyp", hyp_path, "--target-lang", "fr", "--json"])))
            tb.start()
            tb.join(60)
            finished = not tb.is_alive()
            check(ta.is_alive(), "the first call is still blocked in its FIFO")
        finally:
            release("\n".join(ref) + "\n")
        tb.join()
        check(finished, "the second call finished while the first was inside the core")
        check(not ta.is_alive(), "the first call finished once released")
        want = cli_json("--ref", ref_path, "--hyp", hyp_path, "--target-lang", "fr")
        for name, r in (("blocked", ra), ("free", rb)):
            eq(r[0][0], 0, "%s call status (stderr: %s)" % (name, r[0][2]))
            eq(json.loads(r[0][1]), want, "%s call result" % name)


def test_other_threads_output_is_not_captured():
    """Text written to fd 1 and 2 and printed to sys.stdout / sys.stderr
    by Python while a core call runs stays out of the call's result (the
    old extension pointed fds 1 and 2 at its capture files for the call)."""
    hyp = lines("baseline.fr")[:50]
    ref = lines("ref.fr")[:50]
    marker = "NOT-A-RESULT-%d" % os.getpid()
    with tempfile.TemporaryDirectory() as tmp:
        hyp_path = os.path.join(tmp, "hyp.txt")
        with open(hyp_path, "w", encoding="utf-8") as f:
            f.write("\n".join(hyp) + "\n")
        ta, ra, release = _blocked_call(tmp, hyp_path)
        try:
            os.write(1, (marker + " fd1 (expected noise)\n").encode())
            os.write(2, (marker + " fd2 (expected noise)\n").encode())
            print(marker, "print (expected noise)", flush=True)
            print(marker, "stderr (expected noise)", file=sys.stderr, flush=True)
        finally:
            release("\n".join(ref) + "\n")
        check(not ta.is_alive(), "the call finished once released")
        status, out, err = ra[0]
        eq(status, 0, "status (stderr: %s)" % err)
        check(marker not in out, "another thread's output in the result: %r" % out[:200])
        check(marker not in err, "another thread's output in the messages: %r" % err[:200])
        json.loads(out)


def test_scoring_releases_the_gil():
    """A Python thread keeps running while the core scores TICO-19: it
    stamps the clock in a loop, and some stamps fall well inside the core
    call (50 ms from either end; with the GIL held none would, beyond one
    switch interval)."""
    import time
    src, ref, hyp = lines("source.en"), lines("ref.fr"), lines("baseline.fr")
    stamps = []
    running = [True]
    window = []

    def spin():
        while running[0]:
            stamps.append(time.monotonic())
            time.sleep(0.001)

    orig = am._core.run

    def timed(args):
        t0 = time.monotonic()
        out = orig(args)
        window.append((t0, time.monotonic()))
        return out
    t = threading.Thread(target=spin)
    t.start()
    am._core.run = timed
    try:
        # a call of several tenths of a second whatever the machine: four
        # systems (0.4 s here), doubled until a call lasts 0.3 s
        n = 4
        while True:
            del window[:]
            am.corpus_score({"s%d" % i: hyp for i in range(n)}, ref, src, target_lang="fr",
                            glossary=GLOSSARY)
            if window[0][1] - window[0][0] >= 0.3 or n >= 64:
                break
            n *= 2
    finally:
        am._core.run = orig
        running[0] = False
        t.join()
    t0, t1 = window[0]
    check(t1 - t0 > 0.15, "the call is long enough to tell: %.3f s" % (t1 - t0))
    inside = [x for x in stamps if t0 + 0.05 < x < t1 - 0.05]
    check(len(inside) > 10, "%d stamps inside a %.3f s call" % (len(inside), t1 - t0))


# ---- Session against the live service ---------------------------------------

def test_session_equals_live_service():
    """The same posts to Session.add and to a server: every post's running
    totals (R0, R1, R0+1 counts, BLEU, chrF, chrF++, TER) equal."""
    segs = tico19()[:30]
    sess = am.Session(target_lang="fr", glossary=GLOSSARY, source_lang="en")
    server, c = serve()
    try:
        c.create_session(id="py", source_lang="en", target_lang="fr")
        with open(GLOSSARY, "rb") as f:
            r = c.put(base("py") + "/glossary", f.read(), ctype="text/csv")
        eq(r.status, 200, "PUT glossary")
        for s in segs:
            got = sess.add(s["source"], s["translation"], s["hypothesis"])["totals"]["hyp"]
            r = c.post(base("py") + "/segments", {
                "id": s["id"], "source": s["source"], "translation": s["translation"],
                "hypotheses": {"hyp": s["hypothesis"]}})
            eq(r.status, 201, "POST " + s["id"])
            live = r.json()["totals"]["hyp"]
            for key in ("r0", "r1", "r01"):
                eq([getattr(got, key).hits, getattr(got, key).total],
                   [live[key]["hits"], live[key]["total"]], "%s after %s" % (key, s["id"]))
            for key in ("bleu", "chrf", "chrfpp", "ter"):
                eq(getattr(got, key), live[key], "%s after %s" % (key, s["id"]))
            eq(got.terms.get("instances"), live["terms"]["instances"], "term instances")
        eq(len(sess), len(segs), "session length")
    finally:
        shutdown(server, c)


# ---- the README's example -------------------------------------------------

def test_readme_python_example_runs_as_printed():
    """README.md's section "Python": its python block, run from the root with
    the package built here, prints exactly its output block."""
    import re
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    sec = re.search(r"^## Python\b.*?(?=^## )", text, re.S | re.M).group(0)
    code = re.search(r"```python\n(.*?)```", sec, re.S).group(1)
    want = re.search(r"<!-- output -->\s*```text\n(.*?)```\s*<!-- end of output -->",
                     sec, re.S).group(1)
    check(len(code.strip().splitlines()) <= 12, "a short example")
    env = dict(os.environ, PYTHONPATH=PYDIR)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    eq(out, want, "README output")


# ---- a wheel in a fresh virtual environment ----------------------------------

def _wheel_python():
    """An interpreter that can build a wheel offline (setuptools and wheel
    importable): this one, else Debian's (python3-wheel; a pyenv Python may
    lack the wheel package)."""
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run(
                [py, "-c", "import setuptools, wheel, venv"], capture_output=True).returncode == 0:
            return py
    return None


def test_wheel_installs_offline_into_a_venv():
    """docs/python.md's install: a fresh venv (--system-site-packages, for
    setuptools and wheel), a wheel built with --no-index, installed, and
    imported outside the tree."""
    base_py = _wheel_python()
    if base_py is None:
        from harness import Skip
        raise Skip("no interpreter with setuptools and wheel (apt-get install python3-wheel)")
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([base_py, "-m", "venv", "--system-site-packages", venv], check=True)
        py = os.path.join(venv, "bin", "python")
        wheels = os.path.join(tmp, "wheels")
        p = subprocess.run([py, "-m", "pip", "wheel", "--no-build-isolation", "--no-index",
                            "--no-deps", "-w", wheels, PYDIR], capture_output=True, text=True,
                           timeout=900)
        check(p.returncode == 0, "pip wheel: %s" % p.stdout[-2000:] + p.stderr[-2000:])
        whl = [w for w in os.listdir(wheels) if w.endswith(".whl")]
        eq(len(whl), 1, "one wheel")
        p = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-deps",
                            os.path.join(wheels, whl[0])], capture_output=True, text=True)
        check(p.returncode == 0, "pip install: %s" % p.stderr[-2000:])
        segs = ["le petit chat noir dort sur le lit", "il pleut"]
        code = ("import adaptmon, json, sys; segs = json.loads(sys.argv[1]); "
                "r = adaptmon.corpus_score(segs, segs[::-1], target_lang='fr'); "
                "print(json.dumps([adaptmon.__file__, r.json]))")
        out = subprocess.run([py, "-c", code, json.dumps(segs)], check=True, capture_output=True,
                             cwd=tmp, text=True).stdout
        path, got = json.loads(out)
        check(path.startswith(venv), "imported from the venv: %s" % path)
        eq(got, am.corpus_score(segs, segs[::-1], target_lang="fr").json, "the venv's result")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup=setup))

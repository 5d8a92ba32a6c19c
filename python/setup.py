"""Builds adaptmon's Python package: the extension adaptmon._core links the
static archives of the C tree one directory up (libamserver.a holds the
`adaptmon score` code, libamcore.a the scoring core), built by the project's
Makefile into build-py/ with -fPIC. The source lists and link flags come from
the Makefile (make print-LDLIBS), never from a copy here, so files moving
between modules need no change in this file. Offline: nothing is downloaded.

    pip install --no-build-isolation --no-index ./python
ADAPTMON_SRC=DIR names the C tree when this directory is not inside it.
"""
import fcntl
import os
import re
import shlex
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("ADAPTMON_SRC", os.path.dirname(HERE))
BUILD = "build-py"


def make(*args):
    """Runs make in the C tree; returns its stdout."""
    return subprocess.run(["make", "-s", "-C", ROOT, *args], check=True,
                          stdout=subprocess.PIPE, text=True).stdout


with open(os.path.join(ROOT, "cli", "cli.h"), encoding="utf-8") as _f:
    VERSION = re.search(r'#define AM_VERSION "([^"]+)"', _f.read()).group(1)


class BuildCore(build_ext):
    """Builds the archives with the Makefile before linking the extension."""

    def run(self):
        # One build at a time: two at once (tests/run.sh JOBS=2 runs the
        # tests/python suites side by side, each building first) would run
        # two makes into the same build-py/ and copy over a module the other
        # has loaded. The lock is released when this process exits.
        os.makedirs(os.path.join(ROOT, BUILD), exist_ok=True)
        self._lock = open(os.path.join(ROOT, BUILD, ".setup.lock"), "w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        jobs = os.environ.get("ADAPTMON_JOBS", str(os.cpu_count() or 1))
        make("-j" + jobs, "BUILD=" + BUILD, "CFLAGS=-O2 -g -fPIC",
             BUILD + "/libamserver.a", BUILD + "/libamcore.a")
        libs = shlex.split(make("BUILD=" + BUILD, "print-LDLIBS").strip())
        archives = [os.path.join(ROOT, BUILD, "libamserver.a"),
                    os.path.join(ROOT, BUILD, "libamcore.a")]
        for ext in self.extensions:
            ext.extra_objects = archives
            # an archive newer than the module relinks it (setuptools
            # compares the sources and depends only: a change in the C tree
            # would otherwise leave a stale module)
            ext.depends = list(ext.depends) + archives
            ext.extra_link_args = libs
        super().run()


setup(
    name="adaptmon",
    version=VERSION,
    description="adaptmon's scoring core in Python: R0/R1 recall, terms, BLEU, chrF, TER",
    packages=["adaptmon"],
    package_data={"adaptmon": ["py.typed"]},
    ext_modules=[Extension("adaptmon._core", ["adaptmon/_core.c"],
                           include_dirs=[os.path.join(ROOT, "cli"), os.path.join(ROOT, "core")],
                           extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror"])],
    cmdclass={"build_ext": BuildCore},
    python_requires=">=3.9",
)

/*
 * _core.c — the adaptmon scoring core as a CPython extension module.
 *
 * One function, run(args): runs `adaptmon score ARGS` in process, through
 * am_cli_score_io, the very function the command line calls, and returns
 * (exit status, stdout text, stderr text). Identity with `adaptmon score
 * --json` is the contract of the Python package, and calling the CLI's own
 * code path is what keeps it when the scoring code moves between files: no
 * option parsing, reading or JSON building is repeated here or in Python.
 *
 * am_cli_score_io prints on the streams it is given, so each call gets two
 * memory streams of its own (open_memstream) and nothing process-wide is
 * touched: no file descriptor is redirected and no lock is taken. The GIL
 * is released for the whole run, so threads score in parallel, and what
 * another thread writes to stdout or stderr meanwhile stays there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The captured output of one call (owned; am_py_capture_free frees it). */
typedef struct {
    int rc;
    char *out;
    size_t nout;
    char *err;
    size_t nerr;
    int sys_errno; /* nonzero: a memory stream could not be made or written */
} am_py_capture;

static void am_py_capture_free(am_py_capture *c)
{
    free(c->out);
    free(c->err);
}

/* Runs `adaptmon score` (argc, argv borrowed) with its output and messages
 * captured into *c (zeroed first; its buffers new, am_py_capture_free frees
 * them). Called without the GIL: it touches no Python object and no shared
 * state, so any number of threads may be in here at once. */
static void am_py_run(int argc, char **argv, am_py_capture *c)
{
    memset(c, 0, sizeof *c);
    FILE *out = open_memstream(&c->out, &c->nout);
    FILE *err = out ? open_memstream(&c->err, &c->nerr) : NULL;
    if (!out || !err) {
        c->sys_errno = errno ? errno : ENOMEM;
        if (out)
            fclose(out);
        return;
    }
    c->rc = am_cli_score_io(argc, argv, out, err);
    /* fclose publishes the final buffer and size (and reports a failed
     * allocation while flushing) */
    int bad = ferror(out) || ferror(err);
    bad |= fclose(out) != 0;
    bad |= fclose(err) != 0;
    if (bad)
        c->sys_errno = errno ? errno : ENOMEM;
}

/* Copies the str items of seq after "score" into a NULL-terminated argv
 * (new allocations, freed by am_py_argv_free). Returns argc, or -1 with a
 * Python exception set. */
static int am_py_argv(PyObject *seq, char ***argv)
{
    PyObject *fast = PySequence_Fast(seq, "run() takes a sequence of str");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > 100000) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many arguments");
        return -1;
    }
    char **v = calloc((size_t)n + 2, sizeof *v);
    if (!v) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    v[0] = strdup("score");
    int bad = v[0] == NULL;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        if (!s) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "run() arguments must be str");
            bad = 1;
        } else if (!(v[i + 1] = strdup(s))) {
            PyErr_NoMemory();
            bad = 1;
        }
    }
    Py_DECREF(fast);
    if (bad) {
        for (Py_ssize_t i = 0; i <= n; i++)
            free(v[i]);
        free(v);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    *argv = v;
    return (int)n + 1;
}

static void am_py_argv_free(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

PyDoc_STRVAR(am_py_run_doc, "run(args) -> (status, stdout, stderr)\n\n"
                            "Runs `adaptmon score ARGS` in this process (the CLI's own code)\n"
                            "and returns its exit status and its output as text. The GIL is\n"
                            "released while it runs.");

static PyObject *am_py_run_fn(PyObject *self, PyObject *arg)
{
    (void)self;
    char **argv = NULL;
    int argc = am_py_argv(arg, &argv);
    if (argc < 0)
        return NULL;
    am_py_capture c;
    PyThreadState *ts = PyEval_SaveThread(); /* the GIL released */
    am_py_run(argc, argv, &c);
    PyEval_RestoreThread(ts);
    am_py_argv_free(argc, argv);
    if (c.sys_errno) {
        am_py_capture_free(&c);
        errno = c.sys_errno;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyObject *res = Py_BuildValue("(is#s#)", c.rc, c.out ? c.out : "", (Py_ssize_t)c.nout,
                                  c.err ? c.err : "", (Py_ssize_t)c.nerr);
    am_py_capture_free(&c);
    return res;
}

static PyMethodDef am_py_methods[] = {
    {"run", am_py_run_fn, METH_O, am_py_run_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef am_py_module = {
    PyModuleDef_HEAD_INIT,
    "_core",
    "adaptmon's scoring core (the `adaptmon score` code).",
    -1,
    am_py_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__core(void);

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&am_py_module);
    if (m && PyModule_AddStringConstant(m, "VERSION", AM_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

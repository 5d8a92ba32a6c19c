/*
 * _core.c — the adaptmon scoring core as a CPython extension module.
 *
 * run(args) runs `adaptmon score ARGS` in process, through
 * am_cli_score_io, the very function the command line calls, and returns
 * (exit status, stdout text, stderr text); read(args) runs the command's
 * input readers alone (am_cli_read_io) and live_new(args, names) opens a
 * session scored one segment at a time (am_cli_live, a Live object here:
 * the scorer, the word history and the totals stay in C between adds), both
 * of cli/score_embed.h. Identity with `adaptmon score --json` is the
 * contract of the Python package, and calling the CLI's own code path is
 * what keeps it when the scoring code moves between files: no option
 * parsing, reading, scoring step or JSON building is repeated here or in
 * Python.
 *
 * am_cli_score_io prints on the streams it is given, so each call gets two
 * memory streams of its own (open_memstream) and nothing process-wide is
 * touched: no file descriptor is redirected and no lock is taken. The GIL
 * is released for the whole run, so threads score in parallel, and what
 * another thread writes to stdout or stderr meanwhile stays there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include "cli.h"
#include "score_embed.h"

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

/* Opens the two memory streams of a capture into *c (zeroed first).
 * Returns 0, or -1 with c->sys_errno set and nothing to close. */
static int am_py_capture_open(am_py_capture *c, FILE **out, FILE **err)
{
    memset(c, 0, sizeof *c);
    *out = open_memstream(&c->out, &c->nout);
    *err = *out ? open_memstream(&c->err, &c->nerr) : NULL;
    if (!*out || !*err) {
        c->sys_errno = errno ? errno : ENOMEM;
        if (*out)
            fclose(*out);
        return -1;
    }
    return 0;
}

/* Closes the streams of a capture: fclose publishes the final buffers and
 * sizes (and reports a failed allocation while flushing). */
static void am_py_capture_close(am_py_capture *c, FILE *out, FILE *err)
{
    int bad = ferror(out) || ferror(err);
    bad |= fclose(out) != 0;
    bad |= fclose(err) != 0;
    if (bad)
        c->sys_errno = errno ? errno : ENOMEM;
}

/* An entry point of the CLI that prints on the streams it is given:
 * am_cli_score_io or am_cli_read_io. */
typedef int (*am_py_entry)(int argc, char **argv, FILE *out, FILE *err);

/* Runs fn (argc, argv borrowed) with its output and messages captured into
 * *c (its buffers new, am_py_capture_free frees them). Called without the
 * GIL: it touches no Python object and no shared state, so any number of
 * threads may be in here at once. */
static void am_py_run(am_py_entry fn, int argc, char **argv, am_py_capture *c)
{
    FILE *out, *err;
    if (am_py_capture_open(c, &out, &err) < 0)
        return;
    c->rc = fn(argc, argv, out, err);
    am_py_capture_close(c, out, err);
}

/* The (status, stdout, stderr) tuple of a capture, or NULL with OSError
 * when a memory stream failed. Frees the capture's buffers either way. */
static PyObject *am_py_capture_result(am_py_capture *c)
{
    if (c->sys_errno) {
        am_py_capture_free(c);
        errno = c->sys_errno;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyObject *res = Py_BuildValue("(is#s#)", c->rc, c->out ? c->out : "", (Py_ssize_t)c->nout,
                                  c->err ? c->err : "", (Py_ssize_t)c->nerr);
    am_py_capture_free(c);
    return res;
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

/* run() and read(): fn on the argument list (argv[0] "score"). */
static PyObject *am_py_call(am_py_entry fn, PyObject *arg)
{
    char **argv = NULL;
    int argc = am_py_argv(arg, &argv);
    if (argc < 0)
        return NULL;
    am_py_capture c;
    PyThreadState *ts = PyEval_SaveThread(); /* the GIL released */
    am_py_run(fn, argc, argv, &c);
    PyEval_RestoreThread(ts);
    am_py_argv_free(argc, argv);
    return am_py_capture_result(&c);
}

PyDoc_STRVAR(am_py_run_doc, "run(args) -> (status, stdout, stderr)\n\n"
                            "Runs `adaptmon score ARGS` in this process (the CLI's own code)\n"
                            "and returns its exit status and its output as text. The GIL is\n"
                            "released while it runs.");

static PyObject *am_py_run_fn(PyObject *self, PyObject *arg)
{
    (void)self;
    return am_py_call(am_cli_score_io, arg);
}

PyDoc_STRVAR(am_py_read_doc,
             "read(args) -> (status, stdout, stderr)\n\n"
             "Reads the inputs `adaptmon score ARGS` names, as the CLI reads them,\n"
             "and returns what was read as JSON text (cli/score_embed.h).");

static PyObject *am_py_read_fn(PyObject *self, PyObject *arg)
{
    (void)self;
    return am_py_call(am_cli_read_io, arg);
}

/* ---- Live: a session scored one segment at a time ---------------------------
 * A Python object owning an am_cli_live (cli/score_embed.h): the scorer,
 * the in-memory word history and the totals. add() scores the new segment
 * alone with the GIL released. One am_cli_live is not thread-safe, so each
 * object has a lock of its own, taken with the GIL released (a thread
 * waiting for it never holds the GIL another thread needs to finish). */
typedef struct {
    PyObject_HEAD am_cli_live *live; /* owned; NULL only while being made */
    size_t nsys;
    PyThread_type_lock lock;
} am_py_live;

static void am_py_live_dealloc(PyObject *self)
{
    am_py_live *l = (am_py_live *)self;
    am_cli_live_free(l->live);
    if (l->lock)
        PyThread_free_lock(l->lock);
    Py_TYPE(self)->tp_free(self);
}

/* Takes l's lock with the GIL released (a thread waiting for it holds no
 * GIL that the lock's holder may need); returns the saved thread state for
 * am_py_live_unlock. */
static PyThreadState *am_py_live_lock(am_py_live *l)
{
    PyThreadState *ts = PyEval_SaveThread();
    PyThread_acquire_lock(l->lock, WAIT_LOCK);
    return ts;
}

static void am_py_live_unlock(am_py_live *l, PyThreadState *ts)
{
    PyThread_release_lock(l->lock);
    PyEval_RestoreThread(ts);
}

/* The UTF-8 text of o (borrowed from o), NULL for None when none_ok, or
 * NULL with TypeError set. *bad is set on an error. */
static const char *am_py_text(PyObject *o, const char *what, int none_ok, int *bad)
{
    if (none_ok && o == Py_None)
        return NULL;
    Py_ssize_t n = 0;
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &n) : NULL;
    if (!s) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s must be str", what);
        *bad = 1;
    } else if (strlen(s) != (size_t)n) { /* C text ends at a NUL: refused, as the service does */
        PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
        *bad = 1;
        s = NULL;
    }
    return s;
}

PyDoc_STRVAR(am_py_live_add_doc,
             "add(source, translation, hyps) -> (status, stdout, stderr)\n\n"
             "Scores one segment (hyps: a tuple of str, one per system, in the\n"
             "order of the names) against the session's history and adds it.\n"
             "stdout is `adaptmon score --json --per-segment` of the segments so\n"
             "far with the new segment alone in per_segment; on a status other\n"
             "than 0 the session is unchanged and stderr says why.");

static PyObject *am_py_live_add(PyObject *self, PyObject *args)
{
    am_py_live *l = (am_py_live *)self;
    PyObject *src, *ref, *hyps;
    if (!PyArg_ParseTuple(args, "OOO!:add", &src, &ref, &PyTuple_Type, &hyps))
        return NULL;
    if ((size_t)PyTuple_GET_SIZE(hyps) != l->nsys)
        return PyErr_Format(PyExc_ValueError, "add: %zu hypotheses for %zu systems",
                            (size_t)PyTuple_GET_SIZE(hyps), l->nsys);
    int bad = 0;
    const char *h[64];
    const char *s = am_py_text(src, "source", 1, &bad);
    const char *r = bad ? NULL : am_py_text(ref, "translation", 0, &bad);
    for (size_t i = 0; i < l->nsys && !bad; i++)
        h[i] = am_py_text(PyTuple_GET_ITEM(hyps, i), "a hypothesis", 0, &bad);
    if (bad)
        return NULL;
    /* the texts stay valid: args holds the str objects, and their UTF-8
     * forms are cached in them */
    am_py_capture c;
    PyThreadState *ts = am_py_live_lock(l);
    FILE *out, *err;
    if (am_py_capture_open(&c, &out, &err) == 0) {
        c.rc = am_cli_live_add(l->live, s, r, h, out, err);
        am_py_capture_close(&c, out, err);
    }
    am_py_live_unlock(l, ts);
    return am_py_capture_result(&c);
}

PyDoc_STRVAR(am_py_live_reset_doc, "reset()\n\nForgets every segment added (history and totals).");

static PyObject *am_py_live_reset(PyObject *self, PyObject *unused)
{
    (void)unused;
    am_py_live *l = (am_py_live *)self;
    PyThreadState *ts = am_py_live_lock(l);
    am_cli_live_reset(l->live);
    am_py_live_unlock(l, ts);
    Py_RETURN_NONE;
}

static Py_ssize_t am_py_live_len(PyObject *self)
{
    am_py_live *l = (am_py_live *)self;
    PyThreadState *ts = am_py_live_lock(l);
    Py_ssize_t n = (Py_ssize_t)am_cli_live_count(l->live);
    am_py_live_unlock(l, ts);
    return n;
}

static PyMethodDef am_py_live_methods[] = {
    {"add", am_py_live_add, METH_VARARGS, am_py_live_add_doc},
    {"reset", am_py_live_reset, METH_NOARGS, am_py_live_reset_doc},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods am_py_live_seq = {.sq_length = am_py_live_len};

static PyTypeObject am_py_live_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adaptmon._core.Live",
    .tp_basicsize = sizeof(am_py_live),
    .tp_dealloc = am_py_live_dealloc,
    .tp_as_sequence = &am_py_live_seq,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A session of `adaptmon score` kept open (made by live_new).",
    .tp_methods = am_py_live_methods,
};

PyDoc_STRVAR(am_py_live_new_doc,
             "live_new(args, names) -> (status, Live or None, stderr)\n\n"
             "Opens a session with the options args (`adaptmon score` options,\n"
             "no input files) and the systems names; reads the glossary and\n"
             "other resources the options name. On a status other than 0 the\n"
             "session is None and stderr holds the CLI's message.");

static PyObject *am_py_live_new_fn(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *opts, *names;
    if (!PyArg_ParseTuple(args, "OO:live_new", &opts, &names))
        return NULL;
    char **argv = NULL, **nv = NULL;
    int argc = am_py_argv(opts, &argv);
    if (argc < 0)
        return NULL;
    int nn = am_py_argv(names, &nv); /* nv[0] "score", the names after it */
    if (nn < 0) {
        am_py_argv_free(argc, argv);
        return NULL;
    }
    am_py_live *l = PyObject_New(am_py_live, &am_py_live_type);
    if (!l || !(l->lock = PyThread_allocate_lock())) {
        if (l) {
            l->live = NULL;
            Py_DECREF(l);
        }
        am_py_argv_free(argc, argv);
        am_py_argv_free(nn, nv);
        return PyErr_NoMemory();
    }
    l->live = NULL;
    l->nsys = (size_t)nn - 1;
    am_py_capture c;
    PyThreadState *ts = PyEval_SaveThread();
    FILE *out, *err;
    if (am_py_capture_open(&c, &out, &err) == 0) {
        c.rc = am_cli_live_new(argc, argv, (const char *const *)(nv + 1), (size_t)nn - 1, err,
                               &l->live);
        am_py_capture_close(&c, out, err);
    }
    PyEval_RestoreThread(ts);
    am_py_argv_free(argc, argv);
    am_py_argv_free(nn, nv);
    PyObject *res = am_py_capture_result(&c);
    if (!res || !l->live) {
        Py_DECREF(l);
        if (!res)
            return NULL;
        PyObject *t = Py_BuildValue("(iOO)", (int)PyLong_AsLong(PyTuple_GET_ITEM(res, 0)), Py_None,
                                    PyTuple_GET_ITEM(res, 2));
        Py_DECREF(res);
        return t;
    }
    PyObject *t = Py_BuildValue("(iNO)", 0, (PyObject *)l, PyTuple_GET_ITEM(res, 2));
    Py_DECREF(res);
    return t;
}

static PyMethodDef am_py_methods[] = {
    {"run", am_py_run_fn, METH_O, am_py_run_doc},
    {"read", am_py_read_fn, METH_O, am_py_read_doc},
    {"live_new", am_py_live_new_fn, METH_VARARGS, am_py_live_new_doc},
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
    if (PyType_Ready(&am_py_live_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&am_py_module);
    if (m && PyModule_AddStringConstant(m, "VERSION", AM_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

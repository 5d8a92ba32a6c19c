/*
 * _core.c — the adaptmon scoring core as a CPython extension module.
 *
 * One function, run(args): runs `adaptmon score ARGS` in process, through
 * am_cli_score, the very function the command line calls, and returns
 * (exit status, stdout text, stderr text). Identity with `adaptmon score
 * --json` is the contract of the Python package, and calling the CLI's own
 * code path is what keeps it when the scoring code moves between files: no
 * option parsing, reading or JSON building is repeated here or in Python.
 *
 * am_cli_score writes its result to stdout and its errors to stderr, so the
 * two descriptors are pointed at anonymous temporary files for the call.
 * Descriptors are process-wide: the calls are serialized by one mutex (the
 * only static state, and it is not data), with the GIL released so other
 * Python threads run meanwhile. A Python thread that writes to fd 1 or 2
 * while a call runs has its text captured with the result; the package
 * flushes sys.stdout and sys.stderr before each call so that its own
 * buffered output is not.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Serializes the redirection of fds 1 and 2 (see the header comment). */
static pthread_mutex_t am_py_lock = PTHREAD_MUTEX_INITIALIZER;

/* The captured output of one call (owned; am_py_capture_free frees it). */
typedef struct {
    int rc;
    char *out;
    size_t nout;
    char *err;
    size_t nerr;
    int sys_errno; /* nonzero: the redirection itself failed */
} am_py_capture;

static void am_py_capture_free(am_py_capture *c)
{
    free(c->out);
    free(c->err);
}

/* Reads the whole of f from its start into *buf (new allocation, caller
 * frees) and *n. Returns 0, or an errno value. */
static int am_py_slurp(FILE *f, char **buf, size_t *n)
{
    *buf = NULL;
    *n = 0;
    if (fseek(f, 0, SEEK_END) != 0)
        return errno;
    long len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0)
        return errno ? errno : EIO;
    *buf = malloc((size_t)len + 1);
    if (!*buf)
        return ENOMEM;
    *n = fread(*buf, 1, (size_t)len, f);
    (*buf)[*n] = '\0';
    return ferror(f) ? EIO : 0;
}

/* Points fd at a fresh temporary file. Returns the saved original
 * descriptor (>= 0) and the file in *tmp, or -1 with errno set. */
static int am_py_redirect(int fd, FILE **tmp)
{
    *tmp = tmpfile();
    if (!*tmp)
        return -1;
    int saved = dup(fd);
    if (saved < 0 || dup2(fileno(*tmp), fd) < 0) {
        int e = errno;
        if (saved >= 0)
            close(saved);
        fclose(*tmp);
        *tmp = NULL;
        errno = e;
        return -1;
    }
    return saved;
}

/* Puts fd back to saved (consumed). */
static void am_py_restore(int fd, int saved)
{
    if (saved >= 0) {
        dup2(saved, fd);
        close(saved);
    }
}

/* Runs am_cli_score(argc, argv) with stdout and stderr captured into *c.
 * Called without the GIL; argv is borrowed. */
static void am_py_run(int argc, char **argv, am_py_capture *c)
{
    memset(c, 0, sizeof *c);
    FILE *tout = NULL, *terr = NULL;
    pthread_mutex_lock(&am_py_lock);
    fflush(stdout);
    fflush(stderr);
    int sout = am_py_redirect(STDOUT_FILENO, &tout);
    int serr = sout < 0 ? -1 : am_py_redirect(STDERR_FILENO, &terr);
    if (sout < 0 || serr < 0) {
        c->sys_errno = errno ? errno : EIO;
        am_py_restore(STDOUT_FILENO, sout);
        if (tout)
            fclose(tout);
        pthread_mutex_unlock(&am_py_lock);
        return;
    }
    c->rc = am_cli_score(argc, argv);
    fflush(stdout);
    fflush(stderr);
    am_py_restore(STDOUT_FILENO, sout);
    am_py_restore(STDERR_FILENO, serr);
    pthread_mutex_unlock(&am_py_lock);
    int e1 = am_py_slurp(tout, &c->out, &c->nout);
    int e2 = am_py_slurp(terr, &c->err, &c->nerr);
    c->sys_errno = e1 ? e1 : e2;
    fclose(tout);
    fclose(terr);
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

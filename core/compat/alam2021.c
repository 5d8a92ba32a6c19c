/*
 * alam2021.c — profile `alam2021`: evaluate_term_wmt.py without lemmatizer.
 *
 * Layout (in the order of docs/metrics.md §3, profile alam2021):
 *   1. a small Python-`re` subset matcher: the script builds its term
 *      searches as regular expressions from the raw term strings
 *      ("(?= " + alternative + " )"), so "essoufflé ( e )" is a group there;
 *   2. TERm: PyTER-style greedy shifts with the shared prefix-row cache;
 *   3. per-segment exact match and window overlap;
 *   4. corpus values.
 */
#include "compat/alam2021.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ======================================================================
 * 1. Regular expressions (Python `re` subset), Pike-VM existence test
 * ====================================================================== */

enum rn_type {
    RN_CHAR,
    RN_ANY,
    RN_CLASS,
    RN_CAT,
    RN_ALT,
    RN_REP,
    RN_BOL,
    RN_EOL,
    RN_EOS,
    RN_WB,
    RN_NWB
};

#define RX_INF (-1)
#define RX_MAX_DEPTH 64
#define RX_MAX_PROG 20000
#define RX_MAX_REPEAT 1000

typedef struct rx_node {
    int type;
    int32_t c; /* RN_CHAR: code point; RN_CLASS: class index */
    int first; /* first child (RN_CAT, RN_ALT, RN_REP) or -1 */
    int next; /* next sibling or -1 */
    int min, max;
} rx_node;

enum rc_kind { RC_RANGE, RC_DIGIT, RC_NDIGIT, RC_WORD, RC_NWORD, RC_SPACE, RC_NSPACE };

typedef struct rx_item {
    int kind;
    int32_t lo, hi;
} rx_item;

typedef struct rx_class {
    size_t first, n;
    int neg;
} rx_class;

enum ri_op {
    RI_CHAR,
    RI_ANY,
    RI_CLASS,
    RI_SPLIT,
    RI_JMP,
    RI_BOL,
    RI_EOL,
    RI_EOS,
    RI_WB,
    RI_NWB,
    RI_MATCH
};

typedef struct rx_inst {
    int op;
    int32_t c;
    int x, y;
} rx_inst;

typedef struct rx {
    const char *p; /* pattern cursor */
    const char *end;
    int bad;
    rx_node *nodes;
    size_t nnodes, capnodes;
    rx_item *items;
    size_t nitems, capitems;
    rx_class *classes;
    size_t nclasses, capclasses;
    rx_inst *prog;
    size_t nprog, capprog;
} rx;

static int rx_new_node(rx *r, int type)
{
    AM_GROW(r->nodes, r->capnodes, r->nnodes + 1, 32);
    rx_node *n = &r->nodes[r->nnodes];
    n->type = type;
    n->c = 0;
    n->first = n->next = -1;
    n->min = n->max = 0;
    return (int)r->nnodes++;
}

static int32_t rx_peek(const rx *r)
{
    int32_t cp;
    if (r->p >= r->end)
        return -1;
    am_utf8_decode(r->p, (size_t)(r->end - r->p), &cp);
    return cp;
}

static int32_t rx_get(rx *r)
{
    int32_t cp;
    if (r->p >= r->end)
        return -1;
    r->p += am_utf8_decode(r->p, (size_t)(r->end - r->p), &cp);
    return cp;
}

static int rx_is_word(int32_t cp)
{
    if (cp == '_')
        return 1;
    utf8proc_category_t c = utf8proc_category(cp);
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
           (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

static int rx_is_digit(int32_t cp)
{
    return utf8proc_category(cp) == UTF8PROC_CATEGORY_ND;
}

static int rx_hex(rx *r, int ndigits, int32_t *out)
{
    int32_t v = 0;
    for (int i = 0; i < ndigits; i++) {
        int32_t c = rx_get(r);
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        v = v * 16 + d;
        if (v > 0x10FFFF)
            return 0;
    }
    *out = v;
    return 1;
}

/* Parses an escape after '\'. Sets *lit for a literal code point (returns
 * 0), or returns an RC_* category + 1, or a negative RN_* assertion - 1...
 * Encoded as: return 1 literal, 2 category (in *cat), 3 assertion (in *cat
 * an RN_ type). Returns 0 on error. */
static int rx_escape(rx *r, int in_class, int32_t *lit, int *cat)
{
    int32_t c = rx_get(r);
    switch (c) {
    case -1: return 0;
    case 'd': *cat = RC_DIGIT; return 2;
    case 'D': *cat = RC_NDIGIT; return 2;
    case 'w': *cat = RC_WORD; return 2;
    case 'W': *cat = RC_NWORD; return 2;
    case 's': *cat = RC_SPACE; return 2;
    case 'S': *cat = RC_NSPACE; return 2;
    case 'a': *lit = 7; return 1;
    case 'f': *lit = 12; return 1;
    case 'n': *lit = 10; return 1;
    case 'r': *lit = 13; return 1;
    case 't': *lit = 9; return 1;
    case 'v': *lit = 11; return 1;
    case 'x': return rx_hex(r, 2, lit) ? 1 : 0;
    case 'u': return rx_hex(r, 4, lit) ? 1 : 0;
    case 'U': return rx_hex(r, 8, lit) ? 1 : 0;
    case 'b':
        if (in_class) {
            *lit = 8;
            return 1;
        }
        *cat = RN_WB;
        return 3;
    case 'B': *cat = RN_NWB; return in_class ? 0 : 3;
    case 'A': *cat = RN_BOL; return in_class ? 0 : 3;
    case 'Z': *cat = RN_EOS; return in_class ? 0 : 3;
    default: break;
    }
    if ((c >= '0' && c <= '9') || (c < 128 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))))
        return 0; /* backreferences, octal, \N{…}, unknown ASCII-letter escapes */
    *lit = c;
    return 1;
}

static void rx_add_item(rx *r, int kind, int32_t lo, int32_t hi)
{
    AM_GROW(r->items, r->capitems, r->nitems + 1, 16);
    r->items[r->nitems].kind = kind;
    r->items[r->nitems].lo = lo;
    r->items[r->nitems].hi = hi;
    r->nitems++;
}

/* Parses a class after '['. Returns the node or -1. */
static int rx_parse_class(rx *r)
{
    AM_GROW(r->classes, r->capclasses, r->nclasses + 1, 4);
    rx_class *cl = &r->classes[r->nclasses];
    cl->first = r->nitems;
    cl->neg = 0;
    if (rx_peek(r) == '^') {
        rx_get(r);
        cl->neg = 1;
    }
    int first = 1;
    for (;;) {
        int32_t c = rx_get(r);
        int32_t lo, hi;
        int cat = 0;
        if (c == -1)
            return -1;
        if (c == ']' && !first)
            break;
        first = 0;
        if (c == '\\') {
            int k = rx_escape(r, 1, &lo, &cat);
            if (k == 0)
                return -1;
            if (k == 2) {
                rx_add_item(r, cat, 0, 0);
                continue;
            }
        } else {
            lo = c;
        }
        /* a range lo-hi? */
        if (rx_peek(r) == '-' && r->p + 1 < r->end && r->p[1] != ']') {
            rx_get(r);
            int32_t c2 = rx_get(r);
            if (c2 == '\\') {
                int k = rx_escape(r, 1, &hi, &cat);
                if (k != 1)
                    return -1;
            } else {
                hi = c2;
            }
            if (hi < lo)
                return -1;
            rx_add_item(r, RC_RANGE, lo, hi);
        } else {
            rx_add_item(r, RC_RANGE, lo, lo);
        }
    }
    cl = &r->classes[r->nclasses];
    cl->n = r->nitems - cl->first;
    int node = rx_new_node(r, RN_CLASS);
    r->nodes[node].c = (int32_t)r->nclasses++;
    return node;
}

static int rx_parse_alt(rx *r, int depth);

/* Tries to read "{m}", "{m,}", "{,n}", "{m,n}" at r->p (just after '{').
 * Returns 1 and the bounds, 0 when it is not a quantifier (r->p unchanged),
 * -1 on error (max < min or too large). */
static int rx_braces(rx *r, int *min, int *max)
{
    const char *save = r->p;
    long lo = -1, hi = -1;
    int have_comma = 0;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
        lo = (lo < 0 ? 0 : lo) * 10 + (*r->p - '0');
        if (lo > 100000)
            lo = 100000;
        r->p++;
    }
    if (r->p < r->end && *r->p == ',') {
        have_comma = 1;
        r->p++;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            hi = (hi < 0 ? 0 : hi) * 10 + (*r->p - '0');
            if (hi > 100000)
                hi = 100000;
            r->p++;
        }
    } else {
        hi = lo;
    }
    if (r->p >= r->end || *r->p != '}' || (lo < 0 && !have_comma)) {
        r->p = save;
        return 0;
    }
    r->p++;
    *min = lo < 0 ? 0 : (int)lo;
    *max = hi < 0 ? RX_INF : (int)hi;
    if (*max != RX_INF && *max < *min)
        return -1;
    if (*min > RX_MAX_REPEAT || (*max != RX_INF && *max > RX_MAX_REPEAT))
        return -1;
    return 1;
}

/* Parses a sequence of quantified atoms up to '|' or ')' or the end. */
/* Length/complexity (issue 15): the sequence level of a small
 * recursive-descent parser for the regular-expression subset the reference
 * script uses: one case per atom and quantifier form. */
static int rx_parse_seq(rx *r, int depth)
{
    int cat = rx_new_node(r, RN_CAT);
    int last = -1;
    while (r->p < r->end && *r->p != '|' && *r->p != ')') {
        int32_t c = rx_get(r);
        int atom = -1;
        switch (c) {
        case '(':
            if (rx_peek(r) == '?') {
                if (r->end - r->p >= 2 && r->p[1] == ':')
                    r->p += 2;
                else
                    return -1; /* lookarounds, flags, named groups: unsupported */
            }
            atom = rx_parse_alt(r, depth + 1);
            if (atom < 0 || rx_get(r) != ')')
                return -1;
            break;
        case '[': atom = rx_parse_class(r); break;
        case '.': atom = rx_new_node(r, RN_ANY); break;
        case '^': atom = rx_new_node(r, RN_BOL); break;
        case '$': atom = rx_new_node(r, RN_EOL); break;
        case '*':
        case '+':
        case '?': return -1; /* nothing to repeat */
        case '{': {
            int mn, mx;
            int k = rx_braces(r, &mn, &mx);
            if (k != 0)
                return -1; /* a quantifier with nothing to repeat */
            atom = rx_new_node(r, RN_CHAR);
            r->nodes[atom].c = '{';
            break;
        }
        case '\\': {
            int32_t lit = 0;
            int kind = 0;
            int k = rx_escape(r, 0, &lit, &kind);
            if (k == 0)
                return -1;
            if (k == 1) {
                atom = rx_new_node(r, RN_CHAR);
                r->nodes[atom].c = lit;
            } else if (k == 2) {
                /* a one-item class */
                AM_GROW(r->classes, r->capclasses, r->nclasses + 1, 4);
                r->classes[r->nclasses].first = r->nitems;
                r->classes[r->nclasses].n = 1;
                r->classes[r->nclasses].neg = 0;
                rx_add_item(r, kind, 0, 0);
                atom = rx_new_node(r, RN_CLASS);
                r->nodes[atom].c = (int32_t)r->nclasses++;
            } else {
                atom = rx_new_node(r, kind);
            }
            break;
        }
        default:
            atom = rx_new_node(r, RN_CHAR);
            r->nodes[atom].c = c;
            break;
        }
        if (atom < 0)
            return -1;
        /* quantifier? */
        int mn = -2, mx = 0;
        int32_t q = rx_peek(r);
        if (q == '*') {
            mn = 0;
            mx = RX_INF;
            rx_get(r);
        } else if (q == '+') {
            mn = 1;
            mx = RX_INF;
            rx_get(r);
        } else if (q == '?') {
            mn = 0;
            mx = 1;
            rx_get(r);
        } else if (q == '{') {
            rx_get(r);
            int k = rx_braces(r, &mn, &mx);
            if (k < 0)
                return -1;
            if (k == 0) {
                r->p--; /* '{' is a literal, read next round */
                mn = -2;
            }
        }
        if (mn != -2) {
            int t = r->nodes[atom].type;
            if (t == RN_BOL || t == RN_EOL || t == RN_EOS || t == RN_WB || t == RN_NWB)
                return -1; /* nothing to repeat */
            if (rx_peek(r) == '?')
                rx_get(r); /* lazy: same existence */
            int32_t q2 = rx_peek(r);
            if (q2 == '*' || q2 == '+' || q2 == '?')
                return -1; /* multiple repeat / possessive */
            if (q2 == '{') {
                const char *save = r->p;
                rx_get(r);
                int a, b;
                int k = rx_braces(r, &a, &b);
                r->p = save;
                if (k != 0)
                    return -1;
            }
            int rep = rx_new_node(r, RN_REP);
            r->nodes[rep].first = atom;
            r->nodes[rep].min = mn;
            r->nodes[rep].max = mx;
            atom = rep;
        }
        if (last < 0)
            r->nodes[cat].first = atom;
        else
            r->nodes[last].next = atom;
        last = atom;
    }
    return cat;
}

static int rx_parse_alt(rx *r, int depth)
{
    if (depth > RX_MAX_DEPTH)
        return -1;
    int seq = rx_parse_seq(r, depth);
    if (seq < 0)
        return -1;
    if (r->p >= r->end || *r->p != '|')
        return seq;
    int alt = rx_new_node(r, RN_ALT);
    r->nodes[alt].first = seq;
    int last = seq;
    while (r->p < r->end && *r->p == '|') {
        r->p++;
        int s = rx_parse_seq(r, depth);
        if (s < 0)
            return -1;
        r->nodes[last].next = s;
        last = s;
    }
    return alt;
}

static int rx_emit(rx *r, int op, int32_t c, int x, int y)
{
    if (r->nprog >= RX_MAX_PROG) {
        r->bad = 1;
        return (int)r->nprog - 1;
    }
    AM_GROW(r->prog, r->capprog, r->nprog + 1, 64);
    rx_inst *in = &r->prog[r->nprog];
    in->op = op;
    in->c = c;
    in->x = x;
    in->y = y;
    return (int)r->nprog++;
}

static void rx_gen(rx *r, int node)
{
    if (r->bad)
        return;
    const rx_node n = r->nodes[node];
    switch (n.type) {
    case RN_CHAR: rx_emit(r, RI_CHAR, n.c, 0, 0); break;
    case RN_ANY: rx_emit(r, RI_ANY, 0, 0, 0); break;
    case RN_CLASS: rx_emit(r, RI_CLASS, n.c, 0, 0); break;
    case RN_BOL: rx_emit(r, RI_BOL, 0, 0, 0); break;
    case RN_EOL: rx_emit(r, RI_EOL, 0, 0, 0); break;
    case RN_EOS: rx_emit(r, RI_EOS, 0, 0, 0); break;
    case RN_WB: rx_emit(r, RI_WB, 0, 0, 0); break;
    case RN_NWB: rx_emit(r, RI_NWB, 0, 0, 0); break;
    case RN_CAT:
        for (int c = n.first; c >= 0 && !r->bad; c = r->nodes[c].next)
            rx_gen(r, c);
        break;
    case RN_ALT: {
        /* chain: SPLIT a, next; a; JMP end; next: SPLIT b, … */
        int *jmpv = NULL;
        size_t capj = 0, nj = 0;
        for (int c = n.first; c >= 0 && !r->bad; c = r->nodes[c].next) {
            if (r->nodes[c].next < 0) {
                rx_gen(r, c);
                break;
            }
            int split = rx_emit(r, RI_SPLIT, 0, 0, 0);
            if (r->bad)
                break;
            r->prog[split].x = split + 1;
            rx_gen(r, c);
            int j = rx_emit(r, RI_JMP, 0, 0, 0);
            if (r->bad)
                break;
            AM_GROW(jmpv, capj, nj + 1, 8);
            jmpv[nj++] = j;
            r->prog[split].y = (int)r->nprog;
        }
        if (!r->bad)
            for (size_t i = 0; i < nj; i++)
                r->prog[jmpv[i]].x = (int)r->nprog;
        free(jmpv);
        break;
    }
    case RN_REP: {
        for (int i = 0; i < n.min && !r->bad; i++)
            rx_gen(r, n.first);
        if (n.max == RX_INF) {
            int split = rx_emit(r, RI_SPLIT, 0, 0, 0);
            if (r->bad)
                break;
            r->prog[split].x = split + 1;
            rx_gen(r, n.first);
            rx_emit(r, RI_JMP, 0, split, 0);
            if (!r->bad)
                r->prog[split].y = (int)r->nprog;
        } else {
            int nopt = n.max - n.min;
            int *splits = am_xmalloc((size_t)(nopt > 0 ? nopt : 1) * sizeof *splits);
            int ns = 0;
            for (int i = 0; i < nopt && !r->bad; i++) {
                int split = rx_emit(r, RI_SPLIT, 0, 0, 0);
                if (r->bad)
                    break;
                r->prog[split].x = split + 1;
                splits[ns++] = split;
                rx_gen(r, n.first);
            }
            if (!r->bad)
                for (int i = 0; i < ns; i++)
                    r->prog[splits[i]].y = (int)r->nprog;
            free(splits);
        }
        break;
    }
    default: assert(0); break;
    }
}

static void rx_cleanup(rx *r)
{
    free(r->nodes);
    free(r->items);
    free(r->classes);
    free(r->prog);
    memset(r, 0, sizeof *r);
}

/* Compiles pattern[0..n) (valid UTF-8). Returns AM_OK or AM_ERR_INVALID. */
static int rx_compile(rx *r, const char *pattern, size_t n)
{
    memset(r, 0, sizeof *r);
    r->p = pattern;
    r->end = pattern + n;
    int root = rx_parse_alt(r, 0);
    if (root < 0 || r->p != r->end) /* unbalanced ')' stops the parse early */
        return AM_ERR_INVALID;
    rx_gen(r, root);
    rx_emit(r, RI_MATCH, 0, 0, 0);
    return r->bad ? AM_ERR_INVALID : AM_OK;
}

static int rx_class_has(const rx *r, int32_t ci, int32_t cp)
{
    const rx_class *cl = &r->classes[ci];
    int in = 0;
    for (size_t i = 0; i < cl->n && !in; i++) {
        const rx_item *it = &r->items[cl->first + i];
        switch (it->kind) {
        case RC_RANGE: in = cp >= it->lo && cp <= it->hi; break;
        case RC_DIGIT: in = rx_is_digit(cp); break;
        case RC_NDIGIT: in = !rx_is_digit(cp); break;
        case RC_WORD: in = rx_is_word(cp); break;
        case RC_NWORD: in = !rx_is_word(cp); break;
        case RC_SPACE: in = am_py_isspace(cp); break;
        case RC_NSPACE: in = !am_py_isspace(cp); break;
        default: break;
        }
    }
    return cl->neg ? !in : in;
}

/* Scratch space of the Pike VM. */
typedef struct rx_vm {
    int *clist, *nlist, *stack;
    unsigned *mark;
    size_t cap;
    unsigned gen;
} rx_vm;

static int rx_word_before(const char *t, size_t pos)
{
    if (pos == 0)
        return 0;
    size_t k = pos - 1;
    while (k > 0 && ((unsigned char)t[k] & 0xC0) == 0x80)
        k--;
    int32_t cp;
    am_utf8_decode(t + k, pos - k, &cp);
    return rx_is_word(cp);
}

static int rx_word_at(const char *t, size_t len, size_t pos)
{
    if (pos >= len)
        return 0;
    int32_t cp;
    am_utf8_decode(t + pos, len - pos, &cp);
    return rx_is_word(cp);
}

/* Adds pc and its epsilon closure at text position pos to list; returns 1
 * when MATCH is reachable. */
static int rx_add(const rx *r, rx_vm *vm, int *list, size_t *nlist, int pc, const char *t,
                  size_t len, size_t pos)
{
    size_t sp = 0;
    int found = 0;
    vm->stack[sp++] = pc;
    while (sp > 0) {
        int q = vm->stack[--sp];
        if (vm->mark[q] == vm->gen)
            continue;
        vm->mark[q] = vm->gen;
        const rx_inst *in = &r->prog[q];
        switch (in->op) {
        case RI_JMP: vm->stack[sp++] = in->x; break;
        case RI_SPLIT:
            vm->stack[sp++] = in->y;
            vm->stack[sp++] = in->x;
            break;
        case RI_BOL:
            if (pos == 0)
                vm->stack[sp++] = q + 1;
            break;
        case RI_EOL:
            if (pos == len || (pos + 1 == len && t[pos] == '\n'))
                vm->stack[sp++] = q + 1;
            break;
        case RI_EOS:
            if (pos == len)
                vm->stack[sp++] = q + 1;
            break;
        case RI_WB:
        case RI_NWB: {
            int b = rx_word_before(t, pos) != rx_word_at(t, len, pos);
            if (b == (in->op == RI_WB))
                vm->stack[sp++] = q + 1;
            break;
        }
        case RI_MATCH: found = 1; break;
        default: list[(*nlist)++] = q; break;
        }
    }
    return found;
}

/* True when the compiled program matches a prefix of t[pos..len). */
static int rx_run(const rx *r, rx_vm *vm, const char *t, size_t len, size_t pos)
{
    size_t np = r->nprog;
    if (vm->cap < np) {
        vm->cap = np;
        vm->clist = am_xrealloc(vm->clist, np * sizeof *vm->clist);
        vm->nlist = am_xrealloc(vm->nlist, np * sizeof *vm->nlist);
        vm->stack = am_xrealloc(vm->stack, (2 * np + 2) * sizeof *vm->stack);
        vm->mark = am_xrealloc(vm->mark, np * sizeof *vm->mark);
        memset(vm->mark, 0, np * sizeof *vm->mark);
        vm->gen = 0;
    }
    size_t nc = 0, nn = 0;
    vm->gen++;
    if (vm->gen == 0) { /* wrapped: clear the marks */
        memset(vm->mark, 0, vm->cap * sizeof *vm->mark);
        vm->gen = 1;
    }
    if (rx_add(r, vm, vm->clist, &nc, 0, t, len, pos))
        return 1;
    while (nc > 0 && pos < len) {
        int32_t cp;
        size_t k = am_utf8_decode(t + pos, len - pos, &cp);
        size_t npos = pos + k;
        vm->gen++;
        if (vm->gen == 0) {
            memset(vm->mark, 0, vm->cap * sizeof *vm->mark);
            vm->gen = 1;
        }
        nn = 0;
        for (size_t i = 0; i < nc; i++) {
            const rx_inst *in = &r->prog[vm->clist[i]];
            int ok;
            switch (in->op) {
            case RI_CHAR: ok = cp == in->c; break;
            case RI_ANY: ok = cp != '\n'; break;
            case RI_CLASS: ok = rx_class_has(r, in->c, cp); break;
            default: ok = 0; break;
            }
            if (ok && rx_add(r, vm, vm->nlist, &nn, vm->clist[i] + 1, t, len, npos))
                return 1;
        }
        int *tmp = vm->clist;
        vm->clist = vm->nlist;
        vm->nlist = tmp;
        nc = nn;
        pos = npos;
    }
    return 0;
}

static void rx_vm_cleanup(rx_vm *vm)
{
    free(vm->clist);
    free(vm->nlist);
    free(vm->stack);
    free(vm->mark);
    memset(vm, 0, sizeof *vm);
}

/* Characters that make a term string a regular expression in Python. */
static int is_literal_pattern(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strchr(".^$*+?{}[]\\|()", s[i]) && s[i] != '\0')
            return 0;
    return 1;
}

int am_alam_regex_match_at(const char *pattern, const char *text, size_t len, size_t pos)
{
    rx r;
    rx_vm vm;
    if (!pattern || !text || pos > len)
        return AM_ERR_INVALID;
    if (rx_compile(&r, pattern, strlen(pattern)) != AM_OK) {
        rx_cleanup(&r);
        return AM_ERR_INVALID;
    }
    memset(&vm, 0, sizeof vm);
    int m = rx_run(&r, &vm, text, len, pos);
    rx_vm_cleanup(&vm);
    rx_cleanup(&r);
    return m;
}

/* A "(?=<pattern>)" search, literal or compiled. */
typedef struct finder {
    const char *pat;
    size_t n;
    int literal;
    rx re;
} finder;

static int finder_init(finder *f, const char *pat, size_t n)
{
    f->pat = pat;
    f->n = n;
    f->literal = is_literal_pattern(pat, n);
    memset(&f->re, 0, sizeof f->re);
    if (!f->literal && rx_compile(&f->re, pat, n) != AM_OK) {
        rx_cleanup(&f->re);
        return AM_ERR_INVALID;
    }
    return AM_OK;
}

static void finder_cleanup(finder *f)
{
    rx_cleanup(&f->re);
}

/* True when the pattern matches at byte offset pos of t[0..len). */
static int finder_at(const finder *f, rx_vm *vm, const char *t, size_t len, size_t pos)
{
    if (f->literal)
        return len - pos >= f->n && memcmp(t + pos, f->pat, f->n) == 0;
    return rx_run(&f->re, vm, t, len, pos);
}

/* Next code-point start after pos. */
static size_t next_cp(const char *t, size_t len, size_t pos)
{
    pos++;
    while (pos < len && ((unsigned char)t[pos] & 0xC0) == 0x80)
        pos++;
    return pos;
}

/* ======================================================================
 * 2. TERm (notes-alam2021-terM.md)
 * ====================================================================== */

/* The prefix cache stores, for every prefix x[0..i) ever evaluated, the
 * edit-distance row of its first evaluation ("first writer wins": a row
 * written in term mode is reused by unit-mode calls and vice versa). A
 * row is a function of its parent's row, its token and the mode it was
 * written in, so the trie keeps the token and the mode of every node but
 * the rows of only every TER_CHECKPOINT-th depth; the others are
 * recomputed from the nearest stored ancestor when needed. Same rows,
 * about TER_CHECKPOINT times less memory. */
#define TER_CHECKPOINT 64

typedef struct ter_ctx {
    size_t m; /* reference length */
    const int *r; /* reference token ids */
    const unsigned char *term; /* per reference position, may be NULL */
    int cost; /* C */
    /* prefix trie: node 0 is the root */
    int *tok, *child, *sib, *rowix; /* rowix: index of the stored row or -1 */
    unsigned char *tmode; /* 1 = row written in term mode */
    size_t nnodes, capnodes;
    int *rows; /* stored rows, (m + 1) ints each; row 0 is the root's */
    size_t nrows, caprows;
    int *scratch; /* two rows */
    int *path; /* nodes of the current walk, by depth */
    size_t cappath;
    /* w(j) for j = 0..m (w(m) = 1): with term costs, and all ones */
    int *wterm, *wunit;
    uint64_t cells; /* edit-distance cells computed for this segment */
    int over; /* cells passed AM_ALAM_TER_MAX_CELLS: the run was abandoned */
} ter_ctx;

static void ter_reset(ter_ctx *c, size_t m, const int *r, const unsigned char *term, int cost)
{
    c->m = m;
    c->r = r;
    c->term = term;
    c->cost = cost;
    c->nnodes = 0;
    if (c->capnodes < 64) {
        c->capnodes = 64;
        c->tok = am_xrealloc(c->tok, c->capnodes * sizeof *c->tok);
        c->child = am_xrealloc(c->child, c->capnodes * sizeof *c->child);
        c->sib = am_xrealloc(c->sib, c->capnodes * sizeof *c->sib);
        c->rowix = am_xrealloc(c->rowix, c->capnodes * sizeof *c->rowix);
        c->tmode = am_xrealloc(c->tmode, c->capnodes);
    }
    if (c->caprows < 4)
        c->caprows = 4;
    c->rows = am_xrealloc(c->rows, c->caprows * (m + 1) * sizeof *c->rows);
    c->scratch = am_xrealloc(c->scratch, 2 * (m + 1) * sizeof *c->scratch);
    c->wterm = am_xrealloc(c->wterm, (m + 1) * sizeof *c->wterm);
    c->wunit = am_xrealloc(c->wunit, (m + 1) * sizeof *c->wunit);
    for (size_t j = 0; j <= m; j++) {
        c->wunit[j] = 1;
        c->wterm[j] = (j < m && term && term[j]) ? cost : 1;
    }
    /* root: row_0[j] = j, unit costs even for term words */
    c->tok[0] = -1;
    c->child[0] = -1;
    c->sib[0] = -1;
    c->rowix[0] = 0;
    c->tmode[0] = 0;
    for (size_t j = 0; j <= m; j++)
        c->rows[j] = (int)j;
    c->nrows = 1;
    c->nnodes = 1;
    c->cells = 0;
    c->over = 0;
}

static void ter_cleanup(ter_ctx *c)
{
    free(c->tok);
    free(c->child);
    free(c->sib);
    free(c->rowix);
    free(c->tmode);
    free(c->rows);
    free(c->scratch);
    free(c->path);
    free(c->wterm);
    free(c->wunit);
    memset(c, 0, sizeof *c);
}

static int ter_new_node(ter_ctx *c, int parent, int tok, int term_mode)
{
    if (c->nnodes == c->capnodes) {
        c->capnodes *= 2;
        c->tok = am_xrealloc(c->tok, c->capnodes * sizeof *c->tok);
        c->child = am_xrealloc(c->child, c->capnodes * sizeof *c->child);
        c->sib = am_xrealloc(c->sib, c->capnodes * sizeof *c->sib);
        c->rowix = am_xrealloc(c->rowix, c->capnodes * sizeof *c->rowix);
        c->tmode = am_xrealloc(c->tmode, c->capnodes);
    }
    int k = (int)c->nnodes++;
    c->tok[k] = tok;
    c->child[k] = -1;
    c->sib[k] = c->child[parent];
    c->child[parent] = k;
    c->rowix[k] = -1;
    c->tmode[k] = term_mode ? 1 : 0;
    return k;
}

/* Stores a copy of row as node k's row. */
static void ter_store_row(ter_ctx *c, int k, const int *row)
{
    size_t m = c->m;
    if (c->nrows == c->caprows) {
        c->caprows *= 2;
        c->rows = am_xrealloc(c->rows, c->caprows * (m + 1) * sizeof *c->rows);
    }
    memcpy(c->rows + c->nrows * (m + 1), row, (m + 1) * sizeof *row);
    c->rowix[k] = (int)c->nrows++;
}

/* row = the row after prev for token xi in the given mode. */
static void ter_row(ter_ctx *c, const int *prev, int *row, int xi, int term_mode)
{
    size_t m = c->m;
    const int *w = term_mode ? c->wterm : c->wunit;
    const int *r = c->r;
    int left = prev[0] + 1;
    c->cells += m + 1;
    row[0] = left;
    for (size_t j = 1; j <= m; j++) {
        int a = prev[j] + w[j];
        int b = left + w[j - 1];
        int d = prev[j - 1] + (xi == r[j - 1] ? 0 : w[j - 1]);
        int v = a < b ? a : b;
        left = v < d ? v : d;
        row[j] = left;
    }
}

/* ED(x, S): S = term positions when term_mode, else unit costs; walks and
 * extends the shared prefix cache (first writer wins). */
static int ter_ed(ter_ctx *c, const int *x, size_t n, int term_mode)
{
    size_t m = c->m;
    if (c->cappath < n + 1) {
        c->cappath = n + 1;
        c->path = am_xrealloc(c->path, c->cappath * sizeof *c->path);
    }
    int node = 0;
    size_t i = 0, ck = 0; /* ck: depth of the deepest stored row on the path */
    c->path[0] = 0;
    while (i < n) {
        int k = c->child[node];
        while (k >= 0 && c->tok[k] != x[i])
            k = c->sib[k];
        if (k < 0)
            break;
        node = k;
        c->path[++i] = k;
        if (c->rowix[k] >= 0)
            ck = i;
    }
    /* the row of the path's end: from the stored ancestor, each node in
     * the mode it was written in */
    const int *prev = c->rows + (size_t)c->rowix[c->path[ck]] * (m + 1);
    int *buf = c->scratch, flip = 0;
    for (size_t d = ck + 1; d <= i; d++) {
        int *row = buf + (size_t)flip * (m + 1);
        ter_row(c, prev, row, x[d - 1], c->tmode[c->path[d]]);
        prev = row;
        flip ^= 1;
    }
    for (; i < n; i++) {
        int k = ter_new_node(c, node, x[i], term_mode);
        int *row = buf + (size_t)flip * (m + 1);
        ter_row(c, prev, row, x[i], term_mode);
        if ((i + 1) % TER_CHECKPOINT == 0)
            ter_store_row(c, k, row);
        prev = row;
        flip ^= 1;
        node = k;
    }
    if (c->cells > AM_ALAM_TER_MAX_CELLS)
        c->over = 1;
    return prev[m];
}

static int lex_cmp(const int *a, const int *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* TERm for interned tokens h[0..n), c->r[0..m). m > 0. */
/* Complexity (issue 15): the greedy shift loop of the reference script's
 * TER (edit distance, best shift, apply, repeat), kept in one piece so it
 * reads against the original. */
static double ter_run(ter_ctx *c, const int *h, size_t n)
{
    size_t m = c->m;
    int *cur = am_xmalloc((n ? n : 1) * sizeof *cur);
    int *best = am_xmalloc((n ? n : 1) * sizeof *best);
    int *cand = am_xmalloc((n ? n : 1) * sizeof *cand);
    int shifts = 0;
    if (n)
        memcpy(cur, h, n * sizeof *cur);
    for (;;) {
        int pre = ter_ed(c, cur, n, 1);
        int have = 0, best_gain = 0;
        for (size_t i1 = 0; i1 < n && !c->over; i1++) {
            for (size_t i2 = 0; i2 < m && !c->over; i2++) {
                if (i1 == i2 || cur[i1] != c->r[i2])
                    continue;
                size_t len = 1;
                while (i1 + len < n && i2 + len < m && cur[i1 + len] == c->r[i2 + len])
                    len++;
                /* remove [i1, i1+len), insert at i2 of the shortened list */
                size_t rest = n - len;
                size_t ins = i2 < rest ? i2 : rest;
                size_t o = 0;
                for (size_t q = 0; q < n && o < ins; q++)
                    if (q < i1 || q >= i1 + len)
                        cand[o++] = cur[q];
                memcpy(cand + o, cur + i1, len * sizeof *cand);
                o += len;
                size_t skipped = 0;
                for (size_t q = 0; q < n; q++) {
                    if (q >= i1 && q < i1 + len)
                        continue;
                    if (skipped++ < ins)
                        continue;
                    cand[o++] = cur[q];
                }
                assert(o == n);
                int gain = pre - ter_ed(c, cand, n, 0);
                if (!have || gain > best_gain ||
                    (gain == best_gain && lex_cmp(cand, best, n) > 0)) {
                    memcpy(best, cand, n * sizeof *best);
                    best_gain = gain;
                    have = 1;
                }
            }
        }
        if (c->over || !have || best_gain <= 0)
            break;
        shifts++;
        int *t = cur;
        cur = best;
        best = t;
    }
    int ed = ter_ed(c, cur, n, 0);
    free(cur);
    free(best);
    free(cand);
    return (double)(shifts + ed) / (double)m;
}

typedef struct tok_ref {
    const char *s;
    size_t idx; /* position in the combined array */
} tok_ref;

static int tok_ref_cmp(const void *a, const void *b)
{
    const tok_ref *x = a, *y = b;
    return strcmp(x->s, y->s);
}

/* Interns hyp and ref tokens to ids ranked by strcmp (= code-point order for
 * valid UTF-8), so that id order is Python's str order. ids[0..nh+nr). */
static void intern(const char *const *hyp, size_t nh, const char *const *ref, size_t nr, int *ids)
{
    size_t n = nh + nr;
    if (n == 0)
        return;
    tok_ref *v = am_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < nh; i++) {
        v[i].s = hyp[i];
        v[i].idx = i;
    }
    for (size_t i = 0; i < nr; i++) {
        v[nh + i].s = ref[i];
        v[nh + i].idx = nh + i;
    }
    qsort(v, n, sizeof *v, tok_ref_cmp);
    int rank = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(v[i - 1].s, v[i].s) != 0)
            rank++;
        ids[v[i].idx] = rank;
    }
    free(v);
}

static int term_ter_ctx(ter_ctx *c, const char *const *hyp, size_t nhyp, const char *const *ref,
                        size_t nref, const unsigned char *is_term, int term_cost, double *out)
{
    if (nref == 0)
        return AM_ERR_RANGE;
    if (term_cost < 1)
        return AM_ERR_INVALID;
    int *ids = am_xmalloc((nhyp + nref) * sizeof *ids);
    intern(hyp, nhyp, ref, nref, ids);
    ter_reset(c, nref, ids + nhyp, is_term, term_cost);
    *out = ter_run(c, ids, nhyp);
    free(ids);
    return c->over ? AM_ERR_RANGE : AM_OK;
}

int am_alam_term_ter(const char *const *hyp, size_t nhyp, const char *const *ref, size_t nref,
                     const unsigned char *is_term, int term_cost, double *out)
{
    ter_ctx c;
    memset(&c, 0, sizeof c);
    int rc = term_ter_ctx(&c, hyp, nhyp, ref, nref, is_term, term_cost, out);
    ter_cleanup(&c);
    return rc;
}

/* ======================================================================
 * 3. Per segment: term indices, exact match, window overlap
 * ====================================================================== */

int am_alam_term_indices(const char *const *toks, size_t ntoks, const char *const *words,
                         size_t nwords, size_t *idx, size_t cap, size_t *nidx)
{
    size_t s = 0, e = 0;
    int fs = 0, fe = 0;
    if (nwords == 0)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < ntoks && !fs; i++)
        if (strcmp(toks[i], words[0]) == 0) {
            s = i;
            fs = 1;
        }
    for (size_t i = 0; i < ntoks && !fe; i++)
        if (strcmp(toks[i], words[nwords - 1]) == 0) {
            e = i;
            fe = 1;
        }
    if (!fs || !fe)
        return AM_ERR_NOTFOUND;
    size_t n = 0;
    for (size_t i = s; i + 1 < e; i++) { /* range(s, e - 1) */
        if (n < cap)
            idx[n] = i;
        n++;
    }
    if (n < cap)
        idx[n] = e;
    n++;
    *nidx = n;
    return AM_OK;
}

/* Python str.strip() (Unicode whitespace): returns the start and length. */
static void py_strip(const char *s, size_t *start, size_t *len)
{
    size_t n = strlen(s);
    size_t a = 0;
    while (a < n) {
        int32_t cp;
        size_t k = am_utf8_decode(s + a, n - a, &cp);
        if (!am_py_isspace(cp))
            break;
        a += k;
    }
    size_t b = n;
    while (b > a) {
        size_t k = b - 1;
        while (k > a && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        int32_t cp;
        am_utf8_decode(s + k, b - k, &cp);
        if (!am_py_isspace(cp))
            break;
        b = k;
    }
    *start = a;
    *len = b - a;
}

/* Python's string.punctuation substring test: `tok in string.punctuation`. */
static int in_py_punctuation(const char *tok)
{
    static const char punct[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    return strstr(punct, tok) != NULL;
}

/* Splits a collapsed text (single spaces, trimmed) into tokens in place of a
 * copy. Returns the copy (caller frees); tokens point into it. */
static char *split_spaces(const char *text, const char ***toks, size_t *n)
{
    char *copy = am_xstrdup(text);
    size_t cnt = 0, cap = 16;
    const char **v = am_xmalloc(cap * sizeof *v);
    char *p = copy;
    while (*p) {
        if (cnt == cap) {
            cap *= 2;
            v = am_xrealloc(v, cap * sizeof *v);
        }
        v[cnt++] = p;
        char *sp = strchr(p, ' ');
        if (!sp)
            break;
        *sp = '\0';
        p = sp + 1;
    }
    *toks = v;
    *n = cnt;
    return copy;
}

/* One term of the reference, prepared. */
typedef struct pterm {
    char *alts; /* "|"-separated alternatives (tgt [+ "|" + text.strip()]) */
    int tgt_original; /* type contains "tgt_original" */
    size_t imin, imax; /* min and max of the script's index list */
    char *desired; /* " " + text.strip() + " " */
    size_t ndesired_toks;
    size_t group; /* window-overlap group (index of first term with same desired) */
} pterm;

/* Scratch shared by all segments. */
typedef struct seg_scratch {
    rx_vm vm;
    ter_ctx ter;
    am_buf hyp; /* " " + hyp text + " " */
    size_t *claimed;
    size_t nclaimed, capclaimed;
} seg_scratch;

static int has_separator(const char *s)
{
    return s && (strstr(s, " ||| ") || strstr(s, " --> "));
}

/* Exact match of one segment (compare_EXACT without lemmas). */
static int seg_exact(seg_scratch *sc, const pterm *terms, size_t nterms, size_t *correct)
{
    const char *h = sc->hyp.data;
    size_t hl = sc->hyp.len;
    am_buf pat;
    am_buf_init(&pat);
    sc->nclaimed = 0;
    *correct = 0;
    int rc = AM_OK;
    for (size_t t = 0; t < nterms && rc == AM_OK; t++) {
        int flag = 0;
        const char *a = terms[t].alts;
        for (;;) {
            const char *bar = strchr(a, '|');
            size_t alen = bar ? (size_t)(bar - a) : strlen(a);
            am_buf_reset(&pat);
            am_buf_appendc(&pat, ' ');
            am_buf_append(&pat, a, alen);
            am_buf_appendc(&pat, ' ');
            finder f;
            if (finder_init(&f, pat.data, pat.len) != AM_OK) {
                finder_cleanup(&f);
                rc = AM_ERR_INVALID;
                break;
            }
            for (size_t p = 0; p < hl; p = next_cp(h, hl, p)) {
                if (f.literal && h[p] != ' ')
                    continue;
                if (!finder_at(&f, &sc->vm, h, hl, p))
                    continue;
                int taken = 0;
                for (size_t q = 0; q < sc->nclaimed && !taken; q++)
                    taken = sc->claimed[q] == p;
                if (taken)
                    continue;
                AM_GROW(sc->claimed, sc->capclaimed, sc->nclaimed + 1, 16);
                sc->claimed[sc->nclaimed++] = p;
                flag = 1;
                break;
            }
            finder_cleanup(&f);
            if (!bar)
                break;
            a = bar + 1;
        }
        if (flag)
            (*correct)++;
    }
    am_buf_cleanup(&pat);
    return rc;
}

/* Context words: up to w tokens left of lo (nearest first), then up to w
 * right of hi, skipping string.punctuation substrings. Appends pointers. */
static size_t context(const char *const *toks, size_t n, size_t lo, size_t hi, size_t w,
                      const char **out)
{
    size_t k = 0, got = 0;
    for (size_t i = lo; i > 0 && got < w; i--) {
        if (!in_py_punctuation(toks[i - 1])) {
            out[k++] = toks[i - 1];
            got++;
        }
    }
    got = 0;
    for (size_t i = hi + 1; i < n && got < w; i++) {
        if (!in_py_punctuation(toks[i])) {
            out[k++] = toks[i];
            got++;
        }
    }
    return k;
}

typedef struct wo_entry {
    size_t j, k;
    double v;
} wo_entry;

/* Window overlap of one segment for window w (compare_exact_window_overlap). */
/* Length/complexity (issue 15): a line-for-line port of the reference
 * script's compare_exact_window_overlap, kept in its shape so the two can be
 * read side by side (its results are checked bit for bit). */
static int seg_window(seg_scratch *sc, const pterm *terms, size_t nterms, const char *const *rtoks,
                      size_t nr, const char *const *htoks, size_t nh, size_t w, double *out)
{
    const char *h = sc->hyp.data;
    size_t hl = sc->hyp.len;
    double accuracy = 0.0;
    size_t matched = 0;
    int rc = AM_OK;
    size_t cw = nr + nh;
    if (w <= cw / 2)
        cw = 2 * w;
    const char **rw = am_xmalloc((cw + 1) * sizeof *rw);
    const char **hw = am_xmalloc((cw + 1) * sizeof *hw);
    unsigned char *used = am_xmalloc(cw + 1);
    size_t *fts = NULL, nfts = 0, capfts = 0;
    size_t *inst = am_xmalloc((nterms + 1) * sizeof *inst);
    wo_entry *acc = NULL;
    size_t capacc = 0;

    for (size_t g = 0; g < nterms && rc == AM_OK; g++) {
        if (!terms[g].tgt_original || terms[g].group != g)
            continue;
        /* instances of this desired, in order */
        size_t ni = 0;
        for (size_t t = g; t < nterms; t++)
            if (terms[t].tgt_original && terms[t].group == g)
                inst[ni++] = t;
        finder f;
        if (finder_init(&f, terms[g].desired, strlen(terms[g].desired)) != AM_OK) {
            finder_cleanup(&f);
            rc = AM_ERR_INVALID;
            break;
        }
        nfts = 0;
        for (size_t p = 0; p < hl; p = next_cp(h, hl, p)) {
            if (f.literal && h[p] != ' ')
                continue;
            if (finder_at(&f, &sc->vm, h, hl, p)) {
                AM_GROW(fts, capfts, nfts + 1, 8);
                fts[nfts++] = p;
            }
        }
        finder_cleanup(&f);
        if (nfts == 0)
            continue;
        size_t nacc = ni * nfts;
        if (nacc > capacc) {
            capacc = nacc;
            acc = am_xrealloc(acc, capacc * sizeof *acc);
        }
        size_t e = 0;
        for (size_t j = 0; j < ni && rc == AM_OK; j++) {
            const pterm *pt = &terms[inst[j]];
            size_t nrw = context(rtoks, nr, pt->imin, pt->imax, w, rw);
            for (size_t k = 0; k < nfts; k++) {
                size_t cnt_sp = 0;
                for (size_t q = 0; q < fts[k]; q++)
                    cnt_sp += h[q] == ' ';
                if (cnt_sp > nh) { /* the script would raise IndexError */
                    rc = AM_ERR_INVALID;
                    break;
                }
                size_t lo = cnt_sp, hi = cnt_sp + pt->ndesired_toks - 1;
                size_t nhw = context(htoks, nh, lo, hi, w, hw);
                memset(used, 0, nhw);
                size_t cnt = 0;
                for (size_t a = 0; a < nrw; a++) {
                    for (size_t b = 0; b < nhw; b++) {
                        if (!used[b] && strcmp(rw[a], hw[b]) == 0) {
                            used[b] = 1;
                            cnt++;
                            break;
                        }
                    }
                }
                acc[e].j = j;
                acc[e].k = k;
                acc[e].v = nrw ? (double)cnt / (double)nrw : 0.0;
                e++;
            }
        }
        if (rc != AM_OK)
            break;
        /* stable sort, descending by value (insertion sort keeps order) */
        for (size_t a = 1; a < e; a++) {
            wo_entry x = acc[a];
            size_t b = a;
            while (b > 0 && acc[b - 1].v < x.v) {
                acc[b] = acc[b - 1];
                b--;
            }
            acc[b] = x;
        }
        unsigned char *mref = am_xcalloc(ni, 1);
        unsigned char *mhyp = am_xcalloc(nfts, 1);
        for (size_t a = 0; a < e; a++) {
            if (mref[acc[a].j] || mhyp[acc[a].k])
                continue;
            mref[acc[a].j] = 1;
            mhyp[acc[a].k] = 1;
            matched++;
            accuracy += acc[a].v;
        }
        free(mref);
        free(mhyp);
    }
    *out = matched > 0 ? accuracy / (double)matched : 0.0;
    free(rw);
    free(hw);
    free(used);
    free(fts);
    free(inst);
    free(acc);
    return rc;
}

/* Prepares the reference terms of segment rs. Returns AM_OK or
 * AM_ERR_INVALID; *is_term (length ntoks) gets the TERm positions. */
static int prep_terms(const am_sgml_seg *rs, const char *const *toks, size_t ntoks, pterm *pt,
                      unsigned char *is_term)
{
    am_toks words;
    am_toks_init(&words);
    int rc = AM_OK;
    size_t *idx = NULL, capidx = 0;
    for (size_t t = 0; t < rs->nterms && rc == AM_OK; t++) {
        const am_sgml_term *st = &rs->terms[t];
        if (!st->tgt || !st->type || has_separator(st->tgt) || has_separator(st->text)) {
            rc = AM_ERR_INVALID;
            break;
        }
        am_toks_reset(&words);
        am_toks_split_py(&words, st->text);
        if (words.n == 0) {
            rc = AM_ERR_INVALID;
            break;
        }
        size_t nidx = 0;
        rc = am_alam_term_indices(toks, ntoks, (const char *const *)words.v, words.n, idx, capidx,
                                  &nidx);
        if (rc == AM_OK && nidx > capidx) {
            capidx = nidx;
            idx = am_xrealloc(idx, capidx * sizeof *idx);
            rc = am_alam_term_indices(toks, ntoks, (const char *const *)words.v, words.n, idx,
                                      capidx, &nidx);
        }
        if (rc != AM_OK) {
            rc = AM_ERR_INVALID;
            break;
        }
        size_t a, n;
        py_strip(st->text, &a, &n);
        /* alternatives: tgt, plus the stripped text when not a substring of tgt */
        am_buf b;
        am_buf_init(&b);
        am_buf_appends(&b, st->tgt);
        char *stripped = am_xstrndup(st->text + a, n);
        if (!strstr(st->tgt, stripped)) {
            am_buf_appendc(&b, '|');
            am_buf_appends(&b, stripped);
        }
        pt[t].alts = am_buf_detach(&b);
        am_buf_init(&b);
        am_buf_appendc(&b, ' ');
        am_buf_appends(&b, stripped);
        am_buf_appendc(&b, ' ');
        pt[t].desired = am_buf_detach(&b);
        free(stripped);
        pt[t].ndesired_toks = words.n;
        pt[t].tgt_original = strstr(st->type, "tgt_original") != NULL;
        size_t mn = idx[0], mx = idx[0];
        for (size_t i = 1; i < nidx; i++) {
            if (idx[i] < mn)
                mn = idx[i];
            if (idx[i] > mx)
                mx = idx[i];
        }
        pt[t].imin = mn;
        pt[t].imax = mx;
        pt[t].group = t;
        if (pt[t].tgt_original) {
            for (size_t i = 0; i < nidx; i++)
                is_term[idx[i]] = 1;
            for (size_t q = 0; q < t; q++) {
                if (pt[q].tgt_original && strcmp(pt[q].desired, pt[t].desired) == 0) {
                    pt[t].group = pt[q].group;
                    break;
                }
            }
        }
    }
    free(idx);
    am_toks_cleanup(&words);
    return rc;
}

/* Checks the source document the way the script reads it in parallel. */
static int check_source(const am_sgml_doc *src, const am_sgml_doc *ref)
{
    am_toks toks, words;
    int rc = AM_OK;
    if (src->nsegs != ref->nsegs)
        return AM_ERR_INVALID;
    am_toks_init(&toks);
    am_toks_init(&words);
    for (size_t i = 0; i < src->nsegs && rc == AM_OK; i++) {
        const am_sgml_seg *s = &src->segs[i];
        if (strcmp(s->id, ref->segs[i].id) != 0 || s->nterms < ref->segs[i].nterms) {
            rc = AM_ERR_INVALID;
            break;
        }
        am_toks_reset(&toks);
        am_toks_split_py(&toks, s->text);
        for (size_t t = 0; t < ref->segs[i].nterms; t++) {
            am_toks_reset(&words);
            am_toks_split_py(&words, s->terms[t].text);
            size_t nidx;
            if (has_separator(s->terms[t].text) ||
                am_alam_term_indices((const char *const *)toks.v, toks.n,
                                     (const char *const *)words.v, words.n, NULL, 0,
                                     &nidx) != AM_OK) {
                rc = AM_ERR_INVALID;
                break;
            }
        }
    }
    am_toks_cleanup(&toks);
    am_toks_cleanup(&words);
    return rc;
}

static int seg_id_cmp(const void *a, const void *b, const am_sgml_doc *ref)
{
    return strcmp(ref->segs[*(const size_t *)a].id, ref->segs[*(const size_t *)b].id);
}

/* Sorted index of the reference ids (qsort has no context: insertion into a
 * sorted array by binary search instead). Returns AM_ERR_INVALID on a
 * duplicate id. */
static int sort_ids(const am_sgml_doc *ref, size_t *order)
{
    for (size_t i = 0; i < ref->nsegs; i++) {
        size_t lo = 0, hi = i;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = seg_id_cmp(&order[mid], &i, ref);
            if (c == 0)
                return AM_ERR_INVALID;
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(order + lo + 1, order + lo, (i - lo) * sizeof *order);
        order[lo] = i;
    }
    return AM_OK;
}

static size_t find_id(const am_sgml_doc *ref, const size_t *order, const char *id)
{
    size_t lo = 0, hi = ref->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ref->segs[order[mid]].id, id);
        if (c == 0)
            return order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (size_t)-1;
}

/* Scores reference segment rs against hypothesis segment hs into *res. */
static int score_seg(seg_scratch *sc, const am_sgml_seg *rs, const am_sgml_seg *hs,
                     const size_t *windows, size_t nwindows, am_alam_seg *res)
{
    const char **rtoks = NULL, **htoks = NULL;
    size_t nr = 0, nh = 0;
    char *rcopy = split_spaces(rs->text, &rtoks, &nr);
    char *hcopy = split_spaces(hs->text, &htoks, &nh);
    pterm *pt = am_xcalloc(rs->nterms + 1, sizeof *pt);
    unsigned char *is_term = am_xcalloc(nr + 1, 1);
    int rc = prep_terms(rs, rtoks, nr, pt, is_term);

    if (rc == AM_OK) {
        am_buf_reset(&sc->hyp);
        am_buf_appendc(&sc->hyp, ' ');
        am_buf_appends(&sc->hyp, hs->text);
        am_buf_appendc(&sc->hyp, ' ');
        res->em_terms = rs->nterms;
        rc = seg_exact(sc, pt, rs->nterms, &res->em_correct);
    }
    for (size_t w = 0; w < nwindows && rc == AM_OK; w++)
        rc = seg_window(sc, pt, rs->nterms, rtoks, nr, htoks, nh, windows[w], &res->wo[w]);
    if (rc == AM_OK) {
        int trc = term_ter_ctx(&sc->ter, htoks, nh, rtoks, nr, is_term, AM_ALAM_TERM_COST,
                               &res->term_ter);
        res->term_ter_valid = trc == AM_OK;
        if (sc->ter.over)
            rc = AM_ERR_RANGE; /* over the work limit: an error, not a null */
    }
    for (size_t t = 0; t < rs->nterms; t++) {
        free(pt[t].alts);
        free(pt[t].desired);
    }
    free(pt);
    free(is_term);
    free(rtoks);
    free(htoks);
    free(rcopy);
    free(hcopy);
    return rc;
}

/* ======================================================================
 * 4. Corpus
 * ====================================================================== */

int am_alam_score(const am_sgml_doc *src, const am_sgml_doc *ref, const am_sgml_doc *hyp,
                  const size_t *windows, size_t nwindows, am_alam_result *out)
{
    memset(out, 0, sizeof *out);
    if (!ref || !hyp || nwindows == 0 || !windows)
        return AM_ERR_INVALID;
    for (size_t w = 0; w < nwindows; w++)
        if (windows[w] == 0)
            return AM_ERR_INVALID;
    if (src) {
        int rc = check_source(src, ref);
        if (rc != AM_OK)
            return rc;
    }
    size_t *order = am_xmalloc((ref->nsegs + 1) * sizeof *order);
    size_t *pair = am_xmalloc((hyp->nsegs + 1) * sizeof *pair);
    int rc = sort_ids(ref, order);

    out->nwindows = nwindows;
    out->windows = am_xmalloc(nwindows * sizeof *out->windows);
    memcpy(out->windows, windows, nwindows * sizeof *windows);
    out->window_overlap = am_xcalloc(nwindows, sizeof *out->window_overlap);
    out->nsegs = ref->nsegs;
    out->segs = am_xcalloc(ref->nsegs + 1, sizeof *out->segs);
    for (size_t i = 0; i < ref->nsegs; i++) {
        out->segs[i].id = ref->segs[i].id;
        out->segs[i].hyp = (size_t)-1;
        out->segs[i].wo = am_xcalloc(nwindows, sizeof *out->segs[i].wo);
    }
    for (size_t j = 0; j < hyp->nsegs && rc == AM_OK; j++) {
        size_t r = (j < ref->nsegs && strcmp(ref->segs[j].id, hyp->segs[j].id) == 0)
                       ? j
                       : find_id(ref, order, hyp->segs[j].id);
        if (r == (size_t)-1)
            rc = AM_ERR_NOTFOUND;
        else if (out->segs[r].hyp != (size_t)-1)
            rc = AM_ERR_INVALID;
        else {
            out->segs[r].hyp = j;
            pair[j] = r;
        }
    }

    seg_scratch sc;
    memset(&sc, 0, sizeof sc);
    am_buf_init(&sc.hyp);
    for (size_t i = 0; i < ref->nsegs && rc == AM_OK; i++) {
        am_alam_seg *s = &out->segs[i];
        if (s->hyp == (size_t)-1)
            continue;
        rc = score_seg(&sc, &ref->segs[i], &hyp->segs[s->hyp], windows, nwindows, s);
        if (rc == AM_ERR_RANGE)
            out->err_seg = i;
    }
    rx_vm_cleanup(&sc.vm);
    ter_cleanup(&sc.ter);
    am_buf_cleanup(&sc.hyp);
    free(sc.claimed);

    if (rc == AM_OK) {
        /* corpus sums in hypothesis order, as the script accumulates them */
        double ter_sum = 0.0;
        int ter_ok = hyp->nsegs > 0;
        double *wo_sum = am_xcalloc(nwindows, sizeof *wo_sum);
        for (size_t j = 0; j < hyp->nsegs; j++) {
            const am_alam_seg *s = &out->segs[pair[j]];
            out->em_correct += s->em_correct;
            out->em_terms += s->em_terms;
            for (size_t w = 0; w < nwindows; w++)
                wo_sum[w] += s->wo[w];
            if (!s->term_ter_valid)
                ter_ok = 0;
            else
                ter_sum += s->term_ter;
        }
        out->nhyp = hyp->nsegs;
        out->exact_match_valid = out->em_terms > 0;
        if (out->exact_match_valid)
            out->exact_match = (double)out->em_correct / (double)out->em_terms;
        for (size_t w = 0; w < nwindows; w++)
            out->window_overlap[w] = ref->nsegs ? wo_sum[w] / (double)ref->nsegs : 0.0;
        out->term_ter_valid = ter_ok;
        if (ter_ok)
            out->one_minus_term_ter = 1.0 - ter_sum / (double)hyp->nsegs;
        free(wo_sum);
    }
    free(order);
    free(pair);
    return rc;
}

void am_alam_result_free(am_alam_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nsegs; i++)
        free(r->segs[i].wo);
    free(r->segs);
    free(r->windows);
    free(r->window_overlap);
    memset(r, 0, sizeof *r);
}

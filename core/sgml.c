/*
 * sgml.c — WMT21 SGML reader (see sgml.h for the accepted format).
 *
 * A single pass over the buffer with a cursor; no recursion (nested <term>
 * tags use an explicit stack), so any input, however deep or long, is safe.
 * Segments are then indexed by id and by (docid, id) in two hash tables.
 */
#include "sgml.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SGML_MAX_ATTRS 32

typedef struct sgml_attr {
    const char *name;
    size_t name_len;
    const char *val; /* raw (entity-encoded) value */
    size_t val_len;
} sgml_attr;

typedef struct sgml_tag {
    const char *name;
    size_t name_len;
    int closing; /* </name> */
    int selfclose; /* <name/> */
    int special; /* comment, processing instruction or declaration */
    sgml_attr attrs[SGML_MAX_ATTRS];
    size_t nattrs;
} sgml_tag;

typedef struct sgml_state {
    const char *buf;
    size_t len;
    size_t pos;
    size_t err_pos; /* offset of the error, for the line number */
    size_t line_pos; /* line counter cache: line `line` starts at or before line_pos */
    size_t line;
} sgml_state;

/* ---- helpers ------------------------------------------------------------ */

/* Validates UTF-8 (no overlongs, surrogates, > U+10FFFF) and the absence of
 * NUL. Returns AM_OK, AM_ERR_NUL or AM_ERR_UTF8 with *bad = offset. */
static int sgml_validate(const char *s, size_t len, size_t *bad)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned c = u[i];
        size_t n;
        uint32_t cp;
        if (c == 0) {
            *bad = i;
            return AM_ERR_NUL;
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
        } else {
            *bad = i;
            return AM_ERR_UTF8;
        }
        if (len - i - 1 < n) {
            *bad = i;
            return AM_ERR_UTF8;
        }
        for (size_t k = 1; k <= n; k++) {
            if ((u[i + k] & 0xC0) != 0x80) {
                *bad = i;
                return AM_ERR_UTF8;
            }
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            *bad = i;
            return AM_ERR_UTF8;
        }
        i += n + 1;
    }
    return AM_OK;
}

/* 1-based line of byte offset pos (pos is non-decreasing between calls, or
 * the cache restarts). */
static size_t sgml_line_at(sgml_state *st, size_t pos)
{
    if (pos < st->line_pos) {
        st->line_pos = 0;
        st->line = 1;
    }
    if (pos > st->len)
        pos = st->len;
    for (size_t i = st->line_pos; i < pos; i++)
        if (st->buf[i] == '\n')
            st->line++;
    st->line_pos = pos;
    return st->line;
}

static int sgml_fail(sgml_state *st, size_t pos)
{
    st->err_pos = pos;
    return AM_ERR_PARSE;
}

static int sgml_is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int sgml_is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == ':' || c == '.';
}

/* Case-insensitive comparison of a name slice with a lowercase literal. */
static int sgml_name_is(const char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n != k)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return 0;
    }
    return 1;
}

/* True when buf[pos..] starts with lit. */
static int sgml_starts(const sgml_state *st, size_t pos, const char *lit)
{
    size_t k = strlen(lit);
    return pos <= st->len && st->len - pos >= k && memcmp(st->buf + pos, lit, k) == 0;
}

/* True when the '<' at pos starts a tag (as in an HTML parser: followed by
 * a letter, '/' and a letter, '!' or '?'); otherwise it is text ("aged < 19"). */
static int sgml_tag_starts(const sgml_state *st, size_t pos)
{
    assert(st->buf[pos] == '<');
    if (pos + 1 >= st->len)
        return 1; /* a truncated tag: let the tag parser report it */
    char c = st->buf[pos + 1];
    if (c == '/') {
        if (pos + 2 >= st->len)
            return 1;
        c = st->buf[pos + 2];
    } else if (c == '!' || c == '?') {
        return 1;
    }
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Skips to just after the terminator lit, starting at pos; fails when absent. */
static int sgml_skip_past(sgml_state *st, size_t pos, const char *lit, size_t start)
{
    size_t k = strlen(lit);
    for (size_t i = pos; i + k <= st->len; i++) {
        if (memcmp(st->buf + i, lit, k) == 0) {
            st->pos = i + k;
            return AM_OK;
        }
    }
    return sgml_fail(st, start);
}

/* Parses the tag at st->pos (which is '<') into *tag and moves past it. */
/* Complexity (issue 15): a hand-written lexer, one branch per tag form it
 * accepts or refuses (comments, declarations, end and self-closing tags,
 * quoted and bare attribute values). */
static int sgml_parse_tag(sgml_state *st, sgml_tag *tag)
{
    size_t start = st->pos;
    size_t p = start + 1;
    assert(st->buf[start] == '<');
    memset(tag, 0, sizeof *tag);
    if (sgml_starts(st, start, "<!--")) {
        tag->special = 1;
        return sgml_skip_past(st, start + 4, "-->", start);
    }
    if (sgml_starts(st, start, "<?")) {
        tag->special = 1;
        return sgml_skip_past(st, start + 2, "?>", start);
    }
    if (sgml_starts(st, start, "<!")) {
        tag->special = 1;
        return sgml_skip_past(st, start + 2, ">", start);
    }
    if (p < st->len && st->buf[p] == '/') {
        tag->closing = 1;
        p++;
    }
    tag->name = st->buf + p;
    while (p < st->len && sgml_is_name_char(st->buf[p]))
        p++;
    tag->name_len = (size_t)(st->buf + p - tag->name);
    if (tag->name_len == 0)
        return sgml_fail(st, start);
    for (;;) {
        size_t ws = p;
        while (p < st->len && sgml_is_ws(st->buf[p]))
            p++;
        if (p >= st->len)
            return sgml_fail(st, start);
        if (st->buf[p] == '>') {
            st->pos = p + 1;
            return AM_OK;
        }
        if (st->buf[p] == '/' && p + 1 < st->len && st->buf[p + 1] == '>' && !tag->closing) {
            tag->selfclose = 1;
            st->pos = p + 2;
            return AM_OK;
        }
        /* an attribute: needs whitespace before it, a name, '=', a quoted value */
        if (p == ws || tag->closing)
            return sgml_fail(st, start);
        if (tag->nattrs == SGML_MAX_ATTRS)
            return sgml_fail(st, start);
        sgml_attr *a = &tag->attrs[tag->nattrs++];
        a->name = st->buf + p;
        while (p < st->len && sgml_is_name_char(st->buf[p]))
            p++;
        a->name_len = (size_t)(st->buf + p - a->name);
        if (a->name_len == 0)
            return sgml_fail(st, start);
        while (p < st->len && sgml_is_ws(st->buf[p]))
            p++;
        if (p >= st->len || st->buf[p] != '=')
            return sgml_fail(st, start);
        p++;
        while (p < st->len && sgml_is_ws(st->buf[p]))
            p++;
        if (p >= st->len || (st->buf[p] != '"' && st->buf[p] != '\''))
            return sgml_fail(st, start);
        char q = st->buf[p++];
        a->val = st->buf + p;
        while (p < st->len && st->buf[p] != q)
            p++;
        if (p >= st->len)
            return sgml_fail(st, start);
        a->val_len = (size_t)(st->buf + p - a->val);
        p++;
    }
}

/* Decodes the entity at s[0] == '&' (n bytes available) into out. Returns the
 * number of input bytes consumed (>= 1), or 0 for an invalid numeric
 * reference. Unknown entities and bare '&' are kept literally. */
static size_t sgml_entity(const char *s, size_t n, am_buf *out)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    assert(n > 0 && s[0] == '&');
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        size_t k = strlen(named[i].name);
        if (n >= k && memcmp(s, named[i].name, k) == 0) {
            am_buf_appendc(out, named[i].c);
            return k;
        }
    }
    if (n >= 2 && s[1] == '#') {
        size_t p = 2;
        int hex = 0;
        uint32_t cp = 0;
        size_t digits = 0;
        if (p < n && (s[p] == 'x' || s[p] == 'X')) {
            hex = 1;
            p++;
        }
        for (; p < n; p++) {
            char c = s[p];
            int d;
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (hex && c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (hex && c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            else
                break;
            cp = cp * (hex ? 16u : 10u) + (uint32_t)d;
            if (cp > 0x10FFFF)
                return 0;
            digits++;
        }
        if (digits == 0 || p >= n || s[p] != ';')
            return 0;
        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        char enc[4];
        size_t k = am_utf8_encode((int32_t)cp, enc);
        am_buf_append(out, enc, k);
        return p + 1;
    }
    am_buf_appendc(out, '&');
    return 1;
}

/* Decodes entities of s[0..n) into a new string (caller frees); NULL when a
 * numeric reference is invalid. */
static char *sgml_decode(const char *s, size_t n)
{
    am_buf b;
    am_buf_init(&b);
    am_buf_append(&b, "", 0);
    size_t i = 0;
    while (i < n) {
        if (s[i] == '&') {
            size_t k = sgml_entity(s + i, n - i, &b);
            if (k == 0) {
                am_buf_cleanup(&b);
                return NULL;
            }
            i += k;
        } else {
            size_t j = i;
            while (j < n && s[j] != '&')
                j++;
            am_buf_append(&b, s + i, j - i);
            i = j;
        }
    }
    return am_buf_detach(&b);
}

/* Returns the attribute's decoded value (caller frees), NULL when absent.
 * *bad is set when the value holds an invalid numeric reference. */
static char *sgml_attr_get(const sgml_tag *tag, const char *name, int *bad)
{
    for (size_t i = 0; i < tag->nattrs; i++) {
        if (sgml_name_is(tag->attrs[i].name, tag->attrs[i].name_len, name)) {
            char *v = sgml_decode(tag->attrs[i].val, tag->attrs[i].val_len);
            if (!v)
                *bad = 1;
            return v;
        }
    }
    return NULL;
}

/* Byte length of the code point at s and whether it is Python whitespace.
 * s is valid UTF-8 with n > 0 bytes left. */
static size_t sgml_cp(const char *s, size_t n, int *space)
{
    int32_t cp;
    size_t k = am_utf8_decode(s, n, &cp);
    *space = am_py_isspace(cp);
    return k;
}

/* Number of whitespace-separated tokens in s[0..n). */
static size_t sgml_count_tokens(const char *s, size_t n)
{
    size_t count = 0;
    int in_tok = 0;
    size_t i = 0;
    while (i < n) {
        int sp;
        i += sgml_cp(s + i, n - i, &sp);
        if (sp)
            in_tok = 0;
        else if (!in_tok) {
            in_tok = 1;
            count++;
        }
    }
    return count;
}

/* Splits s on Python whitespace and joins with one space (new string). */
static char *sgml_collapse(const char *s, size_t n)
{
    char *out = am_xmalloc(n + 1);
    size_t o = 0;
    size_t i = 0;
    int pending = 0;
    while (i < n) {
        int sp;
        size_t k = sgml_cp(s + i, n - i, &sp);
        if (sp) {
            pending = o > 0;
        } else {
            if (pending)
                out[o++] = ' ';
            pending = 0;
            memcpy(out + o, s + i, k);
            o += k;
        }
        i += k;
    }
    out[o] = '\0';
    return out;
}

static void sgml_term_free(am_sgml_term *t)
{
    free(t->id);
    free(t->type);
    free(t->src);
    free(t->tgt);
    free(t->text);
}

static void sgml_seg_free(am_sgml_seg *s)
{
    free(s->id);
    free(s->text);
    free(s->inner);
    free(s->raw);
    for (size_t i = 0; i < s->nterms; i++)
        sgml_term_free(&s->terms[i]);
    free(s->terms);
}

/* Open-term bookkeeping while a segment is parsed. */
typedef struct sgml_open {
    size_t term; /* index into the segment's terms */
    size_t text_start; /* offset in the inner-text buffer */
} sgml_open;

/* Parses a segment's content; st->pos is just after the <seg …> tag, whose
 * start is seg_start. Fills seg (id already set) and moves past </seg>. */
static int sgml_parse_seg(sgml_state *st, am_sgml_seg *seg, size_t seg_start)
{
    am_buf inner;
    sgml_open *stack = NULL;
    size_t nstack = 0, capstack = 0, capterms = 0;
    size_t content_start = st->pos;
    int rc = AM_OK;

    am_buf_init(&inner);
    am_buf_append(&inner, "", 0);
    for (;;) {
        if (st->pos >= st->len) {
            rc = sgml_fail(st, seg_start);
            goto out;
        }
        char c = st->buf[st->pos];
        if (c == '&') {
            size_t k = sgml_entity(st->buf + st->pos, st->len - st->pos, &inner);
            if (k == 0) {
                rc = sgml_fail(st, st->pos);
                goto out;
            }
            st->pos += k;
            continue;
        }
        if (c != '<' || !sgml_tag_starts(st, st->pos)) {
            size_t j = st->pos + 1; /* a '<' that starts no tag is text */
            while (j < st->len && st->buf[j] != '<' && st->buf[j] != '&')
                j++;
            am_buf_append(&inner, st->buf + st->pos, j - st->pos);
            st->pos = j;
            continue;
        }
        size_t tag_start = st->pos;
        sgml_tag tag;
        rc = sgml_parse_tag(st, &tag);
        if (rc != AM_OK)
            goto out;
        if (tag.special)
            continue;
        if (sgml_name_is(tag.name, tag.name_len, "seg") && tag.closing) {
            if (nstack > 0) { /* an unclosed <term> */
                rc = sgml_fail(st, tag_start);
                goto out;
            }
            seg->raw = am_xstrndup(st->buf + content_start, tag_start - content_start);
            break;
        }
        if (!sgml_name_is(tag.name, tag.name_len, "term") || tag.selfclose) {
            rc = sgml_fail(st, tag_start);
            goto out;
        }
        if (tag.closing) {
            if (nstack == 0) {
                rc = sgml_fail(st, tag_start);
                goto out;
            }
            sgml_open *o = &stack[--nstack];
            am_sgml_term *t = &seg->terms[o->term];
            size_t n = inner.len - o->text_start;
            t->text = am_xstrndup(inner.data + o->text_start, n);
            t->tok_start = sgml_count_tokens(inner.data, o->text_start);
            t->tok_count = sgml_count_tokens(t->text, n);
            continue;
        }
        /* an opening <term …> */
        AM_GROW(seg->terms, capterms, seg->nterms + 1, 4);
        am_sgml_term *t = &seg->terms[seg->nterms++];
        memset(t, 0, sizeof *t);
        int bad = 0;
        t->id = sgml_attr_get(&tag, "id", &bad);
        t->type = sgml_attr_get(&tag, "type", &bad);
        t->src = sgml_attr_get(&tag, "src", &bad);
        t->tgt = sgml_attr_get(&tag, "tgt", &bad);
        /* t->text stays NULL until the closing tag */
        if (bad) {
            rc = sgml_fail(st, tag_start);
            goto out;
        }
        AM_GROW(stack, capstack, nstack + 1, 4);
        stack[nstack].term = seg->nterms - 1;
        stack[nstack].text_start = inner.len;
        nstack++;
    }
    seg->text = sgml_collapse(inner.data, inner.len);
    seg->inner = am_buf_detach(&inner);
out:
    /* terms left open after an error have text == NULL; give them "" so the
     * document stays well-formed for am_sgml_free */
    for (size_t i = 0; i < seg->nterms; i++)
        if (!seg->terms[i].text)
            seg->terms[i].text = am_xstrdup("");
    am_buf_cleanup(&inner);
    free(stack);
    return rc;
}

/* ---- public API --------------------------------------------------------- */

enum sgml_where { W_TOP, W_SET, W_DOC, W_DONE };

/* ---- segment lookup ------------------------------------------------------- */

/* The docid of segment i ("" for a doc without one). Borrowed. */
static const char *sgml_seg_docid(const am_sgml_doc *d, size_t i)
{
    const char *docid = d->docs[d->segs[i].doc].docid;
    return docid ? docid : "";
}

/* Hash of the segment id, and with with_doc of the docid too. */
static uint64_t sgml_key_hash(const char *docid, const char *id, int with_doc)
{
    uint64_t h = am_fnv1a(id);
    if (with_doc)
        h = (h ^ am_fnv1a(docid)) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

/* Whether segment i has id (and docid when with_doc). */
static int sgml_key_eq(const am_sgml_doc *d, size_t i, const char *docid, const char *id,
                       int with_doc)
{
    return strcmp(d->segs[i].id, id) == 0 &&
           (!with_doc || strcmp(sgml_seg_docid(d, i), docid) == 0);
}

/* The slot of table tab (borrowed) holding the key, or the empty slot where
 * it would go. */
static size_t sgml_slot(const am_sgml_doc *d, const size_t *tab, const char *docid, const char *id,
                        int with_doc)
{
    size_t mask = d->index_cap - 1;
    size_t j = (size_t)sgml_key_hash(docid, id, with_doc) & mask;
    assert(d->index_cap && (d->index_cap & mask) == 0);
    while (tab[j] && !sgml_key_eq(d, tab[j] - 1, docid, id, with_doc))
        j = (j + 1) & mask;
    return j;
}

/* Builds d->by_id and d->by_doc_id (first segment of each key wins). */
static void sgml_index(am_sgml_doc *d)
{
    size_t cap = 16;
    while (cap < 2 * d->nsegs)
        cap *= 2;
    assert((cap & (cap - 1)) == 0 && cap >= 2 * d->nsegs); /* probing needs both */
    d->index_cap = cap;
    d->by_id = am_xcalloc(cap, sizeof *d->by_id);
    d->by_doc_id = am_xcalloc(cap, sizeof *d->by_doc_id);
    for (size_t i = 0; i < d->nsegs; i++) {
        const char *docid = sgml_seg_docid(d, i), *id = d->segs[i].id;
        size_t j = sgml_slot(d, d->by_id, docid, id, 0);
        if (!d->by_id[j])
            d->by_id[j] = i + 1;
        j = sgml_slot(d, d->by_doc_id, docid, id, 1);
        if (!d->by_doc_id[j])
            d->by_doc_id[j] = i + 1;
    }
}

/* The first segment of the key: by hash when indexed, else by a scan. */
static size_t sgml_find(const am_sgml_doc *d, const char *docid, const char *id, int with_doc)
{
    const size_t *tab = with_doc ? d->by_doc_id : d->by_id;
    if (!tab) {
        for (size_t i = 0; i < d->nsegs; i++)
            if (sgml_key_eq(d, i, docid, id, with_doc))
                return i;
        return (size_t)-1;
    }
    size_t j = sgml_slot(d, tab, docid, id, with_doc);
    return tab[j] ? tab[j] - 1 : (size_t)-1;
}

/* The document being read: the cursor, the result and where we are. */
typedef struct sgml_reader {
    sgml_state st;
    am_sgml_doc *out;
    size_t capdocs, capsegs, p_depth;
    size_t doc_line; /* line of the open <doc> */
    enum sgml_where where;
} sgml_reader;

/* The element handlers: tag (borrowed) starts at tag_start; each returns
 * AM_OK or AM_ERR_PARSE (a tag that is wrong here). */

/* <srcset|refset|tstset …> and its end tag; kind is the set's. */
static int sgml_on_set(sgml_reader *r, const sgml_tag *tag, int kind)
{
    int bad_attr = 0;
    if (tag->selfclose)
        return AM_ERR_PARSE;
    if (tag->closing) {
        if (r->where == W_DOC && r->p_depth == 0 && (int)r->out->kind == kind &&
            !r->out->unclosed_doc_line) {
            /* the last <doc> was never closed: closed here, with a warning
             * (sacreBLEU reads such a file; am_sgml_doc.unclosed_doc_line) */
            r->out->unclosed_doc_line = r->doc_line;
            r->where = W_SET;
        }
        if (r->where != W_SET || (int)r->out->kind != kind)
            return AM_ERR_PARSE;
        r->where = W_DONE;
        return AM_OK;
    }
    if (r->where != W_TOP)
        return AM_ERR_PARSE;
    r->out->kind = (enum am_sgml_kind)kind;
    r->out->setid = sgml_attr_get(tag, "setid", &bad_attr);
    r->out->srclang = sgml_attr_get(tag, "srclang", &bad_attr);
    r->out->trglang = sgml_attr_get(tag, "trglang", &bad_attr);
    r->where = W_SET;
    return bad_attr ? AM_ERR_PARSE : AM_OK;
}

/* <doc docid sysid> (at tag_start) and </doc>. */
static int sgml_on_doc(sgml_reader *r, const sgml_tag *tag, size_t tag_start)
{
    int bad_attr = 0;
    am_sgml_doc *out = r->out;
    if (tag->selfclose)
        return AM_ERR_PARSE;
    if (tag->closing) {
        if (r->where != W_DOC || r->p_depth != 0)
            return AM_ERR_PARSE;
        r->where = W_SET;
        return AM_OK;
    }
    if (r->where != W_SET)
        return AM_ERR_PARSE;
    AM_GROW(out->docs, r->capdocs, out->ndocs + 1, 8);
    am_sgml_docinfo *d = &out->docs[out->ndocs++];
    memset(d, 0, sizeof *d);
    d->first_seg = out->nsegs;
    d->docid = sgml_attr_get(tag, "docid", &bad_attr);
    d->sysid = sgml_attr_get(tag, "sysid", &bad_attr);
    r->doc_line = sgml_line_at(&r->st, tag_start);
    r->where = W_DOC;
    r->p_depth = 0;
    return bad_attr ? AM_ERR_PARSE : AM_OK;
}

/* <p>, </p> and <p/> inside a doc. */
static int sgml_on_p(sgml_reader *r, const sgml_tag *tag)
{
    if (r->where != W_DOC)
        return AM_ERR_PARSE;
    if (tag->selfclose)
        return AM_OK;
    if (!tag->closing) {
        r->p_depth++;
        return AM_OK;
    }
    if (r->p_depth == 0)
        return AM_ERR_PARSE;
    r->p_depth--;
    return AM_OK;
}

/* <seg id> … </seg>: reads the segment (*seg_rc: its own error, which
 * sets st.err_pos itself). */
static int sgml_on_seg(sgml_reader *r, const sgml_tag *tag, size_t tag_start, int *seg_rc)
{
    int bad_attr = 0;
    am_sgml_doc *out = r->out;
    if (r->where != W_DOC || tag->closing || tag->selfclose)
        return AM_ERR_PARSE;
    char *id = sgml_attr_get(tag, "id", &bad_attr);
    if (!id || bad_attr) {
        free(id);
        return AM_ERR_PARSE;
    }
    AM_GROW(out->segs, r->capsegs, out->nsegs + 1, 64);
    am_sgml_seg *s = &out->segs[out->nsegs++];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->doc = out->ndocs - 1;
    s->line = sgml_line_at(&r->st, tag_start);
    out->docs[out->ndocs - 1].nsegs++;
    *seg_rc = sgml_parse_seg(&r->st, s, tag_start);
    out->nterms += s->nterms;
    return AM_OK;
}

/* One tag at the cursor (after it on return). AM_OK, or an error with
 * st.err_pos set. */
static int sgml_read_tag(sgml_reader *r)
{
    size_t tag_start = r->st.pos;
    sgml_tag tag;
    int rc = sgml_parse_tag(&r->st, &tag);
    if (rc != AM_OK || tag.special)
        return rc;
    static const char *const sets[] = {"srcset", "refset", "tstset"}; /* enum am_sgml_kind */
    int seg_rc = AM_OK;
    rc = AM_ERR_PARSE;
    for (int k = 0; k < 3; k++)
        if (sgml_name_is(tag.name, tag.name_len, sets[k]))
            rc = sgml_on_set(r, &tag, k);
    if (sgml_name_is(tag.name, tag.name_len, "doc"))
        rc = sgml_on_doc(r, &tag, tag_start);
    else if (sgml_name_is(tag.name, tag.name_len, "p"))
        rc = sgml_on_p(r, &tag);
    else if (sgml_name_is(tag.name, tag.name_len, "seg"))
        rc = sgml_on_seg(r, &tag, tag_start, &seg_rc);
    if (rc != AM_OK)
        return sgml_fail(&r->st, tag_start);
    return seg_rc;
}

int am_sgml_parse(const char *buf, size_t len, am_sgml_doc *out, size_t *err_line)
{
    sgml_reader r;
    memset(out, 0, sizeof *out);
    if (err_line)
        *err_line = 0;
    if (!buf && len > 0)
        return AM_ERR_INVALID;
    memset(&r, 0, sizeof r);
    r.st.buf = buf;
    r.st.len = len;
    r.st.line = 1;
    r.out = out;
    r.where = W_TOP;

    size_t bad = 0;
    int rc = sgml_validate(buf, len, &bad);
    if (rc != AM_OK) {
        if (err_line)
            *err_line = sgml_line_at(&r.st, bad);
        return rc;
    }
    while (rc == AM_OK && r.st.pos < r.st.len) {
        char c = r.st.buf[r.st.pos];
        if (sgml_is_ws(c))
            r.st.pos++;
        else if (c != '<') /* text outside a segment */
            rc = sgml_fail(&r.st, r.st.pos);
        else
            rc = sgml_read_tag(&r);
    }
    if (rc == AM_OK && r.where == W_DOC && r.p_depth == 0 && !out->unclosed_doc_line) {
        /* the file ends inside its last <doc>: read as sacreBLEU does,
         * with a warning (the set is left open too) */
        out->unclosed_doc_line = r.doc_line;
        out->unclosed_set = 1;
        r.where = W_DONE;
    }
    if (rc == AM_OK && r.where != W_DONE)
        rc = sgml_fail(&r.st, r.st.len);
    if (rc == AM_OK) {
        sgml_index(out);
        return AM_OK;
    }
    if (err_line)
        *err_line = sgml_line_at(&r.st, r.st.err_pos);
    am_sgml_free(out);
    return rc;
}

void am_sgml_free(am_sgml_doc *doc)
{
    if (!doc)
        return;
    free(doc->setid);
    free(doc->srclang);
    free(doc->trglang);
    for (size_t i = 0; i < doc->ndocs; i++) {
        free(doc->docs[i].docid);
        free(doc->docs[i].sysid);
    }
    free(doc->docs);
    for (size_t i = 0; i < doc->nsegs; i++)
        sgml_seg_free(&doc->segs[i]);
    free(doc->segs);
    free(doc->by_id);
    free(doc->by_doc_id);
    memset(doc, 0, sizeof *doc);
}

size_t am_sgml_find_seg(const am_sgml_doc *doc, const char *id)
{
    return sgml_find(doc, "", id, 0);
}

size_t am_sgml_find_doc_seg(const am_sgml_doc *doc, const char *docid, const char *id)
{
    return sgml_find(doc, docid ? docid : "", id, 1);
}

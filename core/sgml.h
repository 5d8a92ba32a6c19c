/*
 * sgml.h — reader for WMT21 terminology-task SGML documents.
 *
 * A document is one <srcset>, <refset> or <tstset> element holding <doc
 * docid=… sysid=…> elements (optionally wrapped in <p>), each holding <seg
 * id="…">…</seg> elements. Segment content is text with inline
 * <term id type src tgt> … </term> tags (which may nest). The reader works on
 * a memory buffer (no I/O), keeps no global state and never crashes on any
 * input: malformed input is an error with the offending line.
 *
 * Text of a segment (data/README.md): the <seg> content with tags removed,
 * entities decoded (&lt; &gt; &amp; &quot; &apos; &#N; &#xH;; an unknown
 * entity or a bare '&' is kept as written, as an HTML parser does), then split
 * on Python str.isspace() whitespace and re-joined with one space (so trimmed).
 */
#ifndef AM_SGML_H
#define AM_SGML_H

#include "am.h"

enum am_sgml_kind { AM_SGML_SRCSET = 0, AM_SGML_REFSET = 1, AM_SGML_TSTSET = 2 };

/* One inline <term> tag. Attribute values are entity-decoded; an attribute
 * that is absent is NULL. */
typedef struct am_sgml_term {
    char *id;
    char *type;
    char *src;
    char *tgt;
    /* The tag's own text: decoded content between <term …> and </term>,
     * inner tags removed, whitespace kept as written (BeautifulSoup's
     * tag.text). Never NULL. */
    char *text;
    /* Position of the tag's text in the segment's plain-text tokens:
     * tok_start = number of tokens that begin before the tag's content,
     * tok_count = number of tokens of `text`. Meaningful when the tag sits on
     * token boundaries (always in WMT21 data). */
    size_t tok_start;
    size_t tok_count;
} am_sgml_term;

typedef struct am_sgml_seg {
    char *id; /* the seg's id attribute (required) */
    size_t doc; /* index into am_sgml_doc.docs */
    size_t line; /* 1-based line of the <seg> tag */
    char *text; /* plain text: tags removed, decoded, whitespace collapsed */
    char *inner; /* decoded text with tags removed, whitespace as written */
    char *raw; /* raw inner content exactly as in the input (tags kept) */
    am_sgml_term *terms; /* in order of their opening tags */
    size_t nterms;
} am_sgml_seg;

typedef struct am_sgml_docinfo {
    char *docid; /* NULL when absent */
    char *sysid; /* NULL when absent */
    size_t first_seg; /* index of its first segment in am_sgml_doc.segs */
    size_t nsegs;
} am_sgml_docinfo;

typedef struct am_sgml_doc {
    enum am_sgml_kind kind;
    char *setid; /* attributes of the set element; NULL when absent */
    char *srclang;
    char *trglang;
    am_sgml_docinfo *docs;
    size_t ndocs;
    am_sgml_seg *segs; /* all segments of all docs, in file order */
    size_t nsegs;
    size_t nterms; /* total number of <term> tags */
    /* Warning: the 1-based line of a <doc> that was not closed before the
     * set's end tag or the end of the file (0: none). sacreBLEU and the WMT
     * reference scripts read segments line by line and never notice (the
     * historical TICO-19 release has one), so the document is read as if it
     * were closed there; a caller should say so. */
    size_t unclosed_doc_line;
    int unclosed_set; /* ... and the set element was not closed either */
    /* Hash tables built by am_sgml_parse (open addressing, slots hold a
     * segment index + 1, 0 = empty; cap a power of two): the first segment
     * of each id, and of each (docid, id). NULL: lookups scan. */
    size_t *by_id;
    size_t *by_doc_id;
    size_t index_cap;
} am_sgml_doc;

/* Parses buf[0..len) (need not be NUL-terminated) into *out, which the caller
 * releases with am_sgml_free (also after an error: *out is then empty).
 * Returns AM_OK; AM_ERR_NUL for a NUL byte; AM_ERR_UTF8 for invalid UTF-8;
 * AM_ERR_PARSE for malformed input (empty input, no set element, unknown or
 * unbalanced tags (but a last <doc> left open is closed with a warning, see
 * unclosed_doc_line), text outside segments, unterminated tags or attribute
 * values, a <seg> or <doc> outside its parent, a seg without id, a bad
 * numeric entity). When err_line is non-NULL it receives the 1-based line of
 * the error (0 on success). Thread-safe. */
int am_sgml_parse(const char *buf, size_t len, am_sgml_doc *out, size_t *err_line);

/* Frees everything owned by doc and leaves it empty. NULL-safe. */
void am_sgml_free(am_sgml_doc *doc);

/* Returns the index of the first segment whose id equals id, in any
 * document, or (size_t)-1. A hash lookup (a scan for a doc not built by
 * am_sgml_parse). */
size_t am_sgml_find_seg(const am_sgml_doc *doc, const char *id);
/* Returns the index of the first segment with id in the first document
 * with docid (NULL: a <doc> without docid), or (size_t)-1: how segments
 * of a source, reference and hypothesis file pair up. A hash lookup. */
size_t am_sgml_find_doc_seg(const am_sgml_doc *doc, const char *docid, const char *id);

#endif

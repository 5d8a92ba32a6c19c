/*
 * score_in.c — the inputs of `adaptmon score`: files in, segments and
 * sessions out.
 *
 * Every input file is read whole (am_cli_load: at most 1 GiB; plain text
 * must be valid UTF-8 without NUL bytes, am_cli_validate) and the segments
 * borrow their texts from those buffers, so nothing is copied per segment;
 * am_cli_run_free releases them with the rest of the run. Plain-text files
 * are one session in line order (am_cli_read_plain), SGML files are paired
 * by segment id, one session per document with --by-doc (am_cli_read_sgml),
 * XLIFF files are one session per file or per <file> element
 * (am_cli_xliff). The glossary, the background vocabulary and a stopword
 * file are loaded here too (am_cli_load_resources), after XLIFF, whose
 * declared languages they follow. Errors are printed here, naming the file
 * and line; callers only see the exit status.
 */
#include "score_int.h"

#include "text.h"
#include "textenc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file. Returns 0 or prints an error and returns 1. */
static int am_cli_load(FILE *err, am_cli_file *f)
{
    int in = !strcmp(f->path, "-"); /* sacreBLEU's stdin (--hyp -, -i -) */
    FILE *fp = in ? stdin : fopen(f->path, "rb");
    if (!fp) {
        fprintf(err, "adaptmon score: cannot open '%s': %s\n", f->path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, n = 0, r;
    char *buf = am_xmalloc(cap);
    while ((r = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
        n += r;
        if (n > (size_t)AM_CLI_MAX_FILE) {
            fprintf(err, "adaptmon score: '%s' is larger than 1 GiB\n", f->path);
            if (!in)
                fclose(fp);
            free(buf);
            return 1;
        }
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = am_xrealloc(buf, cap);
        }
    }
    int bad = ferror(fp);
    if (!in)
        fclose(fp);
    if (bad) {
        fprintf(err, "adaptmon score: cannot read '%s'\n", f->path);
        free(buf);
        return 1;
    }
    buf[n] = '\0';
    f->buf = buf;
    f->len = n;
    return 0;
}

/* Validates a loaded file as UTF-8 without NUL; reports line and column. */
static int am_cli_validate(FILE *err, const am_cli_file *f)
{
    size_t off = 0;
    int rc = am_text_validate(f->buf, f->len, &off);
    if (rc == AM_OK)
        return 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (f->buf[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    /* name the encoding it looks like (UTF-16, windows-1252, …) and the
     * command that converts it */
    am_buf why;
    am_buf_init(&why);
    am_textenc_diagnose(f->buf, f->len, f->path, &why);
    fprintf(err, "adaptmon score: %s:%zu:%zu: %s; %s\n", f->path, line, col,
            rc == AM_ERR_NUL ? "NUL byte in text" : "invalid UTF-8", am_buf_str(&why));
    am_buf_cleanup(&why);
    return 1;
}

/* Splits a plain-text file into lines in place ('\n', a trailing '\r' is
 * dropped; a final newline ends the last line). *lines is malloc'd. */
static size_t am_cli_lines(am_cli_file *f, char ***lines)
{
    size_t n = 0, cap = 1024;
    char **v = am_xmalloc(cap * sizeof *v);
    char *p = f->buf, *end = f->buf + f->len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *stop = nl ? nl : end;
        if (stop > p && stop[-1] == '\r')
            stop[-1] = '\0';
        *stop = '\0';
        if (n == cap) {
            cap *= 2;
            v = am_xrealloc(v, cap * sizeof *v);
        }
        v[n++] = p;
        p = nl ? nl + 1 : end;
    }
    *lines = v;
    return n;
}

static int am_cli_sgml(FILE *err, am_cli_file *f, am_sgml_doc *doc)
{
    size_t line = 0;
    int rc = am_sgml_parse(f->buf, f->len, doc, &line);
    if (rc != AM_OK) {
        fprintf(err, "adaptmon score: %s:%zu: %s (%s)\n", f->path, line,
                rc == AM_ERR_PARSE ? "malformed SGML" : am_strerror(rc), "WMT21 SGML expected");
        return 1;
    }
    if (doc->unclosed_doc_line)
        fprintf(err,
                "adaptmon score: warning: %s:%zu: this <doc> is not closed (no </doc> before %s); "
                "read as sacreBLEU reads it, its segments up to there\n",
                f->path, doc->unclosed_doc_line,
                doc->unclosed_set ? "the end of the file" : "the set's end tag");
    return 0;
}

/* Names the unnamed hypotheses: the SGML sysid of the first document
 * (sysids[i], NULL when none), else the file name without its extension;
 * a name taken already becomes hyp<N>. */
static void am_cli_default_names(am_cli *c, const char *const *sysids)
{
    for (size_t i = 0; i < c->nhyp; i++) {
        if (c->hyp[i].name)
            continue;
        char *nm;
        if (sysids && sysids[i] && *sysids[i]) {
            nm = am_xstrdup(sysids[i]);
        } else if (!strcmp(c->hyp[i].path, "-")) {
            nm = am_xstrdup("stdin");
        } else {
            const char *base = strrchr(c->hyp[i].path, '/');
            base = base ? base + 1 : c->hyp[i].path;
            const char *dot = strchr(base, '.');
            nm = am_xstrndup(base, dot && dot > base ? (size_t)(dot - base) : strlen(base));
        }
        for (size_t k = 0; k < c->nhyp; k++)
            if (k != i && c->hyp[k].name && !strcmp(c->hyp[k].name, nm)) {
                free(nm);
                nm = am_xmalloc(32);
                snprintf(nm, 32, "hyp%zu", i + 1);
                break;
            }
        c->hyp[i].name = nm;
    }
}

int am_cli_load_resources(am_cli *c, am_gloss *gloss, am_vocab **background, am_toks *custom_sw)
{
    if (c->glossary_path) {
        am_cli_file f = {.path = (char *)(uintptr_t)c->glossary_path};
        if (am_cli_load(c->err, &f))
            return 1;
        enum am_gloss_format fmt = AM_GLOSS_AUTO;
        if (c->glossary_format && am_gloss_format_parse(c->glossary_format, &fmt) != AM_OK) {
            fprintf(c->err, "adaptmon score: unknown glossary format '%s'\n", c->glossary_format);
            free(f.buf);
            return 2;
        }
        am_gloss_report rep;
        /* a CSV/TSV header naming languages maps to --source-lang/--target-lang */
        const char *sl =
            c->cfg.source_lang[0] && strcmp(c->cfg.source_lang, "und") ? c->cfg.source_lang : NULL;
        const char *tl =
            c->cfg.target_lang[0] && strcmp(c->cfg.target_lang, "und") ? c->cfg.target_lang : NULL;
        int rc = am_gloss_parse_langs(f.buf, f.len, fmt, sl, tl, NULL, gloss, &rep);
        free(f.buf);
        if (rc != AM_OK) {
            fprintf(c->err, "adaptmon score: %s: %s\n", c->glossary_path,
                    rep.msg[0] ? rep.msg : am_strerror(rc));
            /* 2: a TBX with no side in the run's languages (a CSV header naming
             * other languages stays 1, as tests/cli/test_score.py pins) */
            return rc == AM_ERR_INVALID && rep.format == AM_GLOSS_TBX ? 2 : 1;
        }
    }
    if (c->background_path) {
        am_cli_file f = {.path = (char *)(uintptr_t)c->background_path};
        if (am_cli_load(c->err, &f))
            return 1;
        *background = am_vocab_new();
        size_t line = 0;
        const char *msg = NULL;
        int rc;
        am_xliff_report rep = {0}; /* msg points into it until the message is printed */
        if (am_xliff_looks_xml(f.buf, f.len)) {
            am_recall_config rc_tmx;
            am_xliff_tmx_rcfg(&c->cfg, &rc_tmx);
            am_recall_models models; /* MeCab for a ja target: words as recall's */
            am_buf why;
            am_buf_init(&why);
            rc = am_recall_models_open(&rc_tmx, &models, &why);
            if (rc == AM_OK)
                rc = am_xliff_tmx_counts_src(
                    f.buf, f.len, c->cfg.source_lang, /* checked against the memory */
                    c->cfg.target_lang[0] && strcmp(c->cfg.target_lang, "und") ? c->cfg.target_lang
                                                                               : NULL,
                    &rc_tmx, *background, NULL, NULL, &rep);
            else
                snprintf(rep.msg, sizeof rep.msg, "tokenizer %s: %s", am_tok_name(rc_tmx.tokenizer),
                         am_buf_str(&why));
            am_recall_models_close(&models);
            am_buf_cleanup(&why);
            line = rep.line;
            msg = rc ? rep.msg : NULL;
        } else {
            rc = am_vocab_parse_counts(f.buf, f.len, *background, &line, &msg);
        }
        free(f.buf);
        if (rc != AM_OK) {
            fprintf(c->err, "adaptmon score: %s:%zu: %s\n", c->background_path, line,
                    msg ? msg : am_strerror(rc));
            return rc == AM_ERR_INVALID ? 2 : 1; /* 2: no side in the run's languages */
        }
        c->cfg.has_background = 1;
    }
    if (c->stopwords_path) {
        am_cli_file f = {.path = (char *)(uintptr_t)c->stopwords_path};
        if (am_cli_load(c->err, &f) || am_cli_validate(c->err, &f)) {
            free(f.buf);
            return 1;
        }
        char **lines;
        size_t n = am_cli_lines(&f, &lines);
        for (size_t i = 0; i < n; i++) {
            am_toks words;
            am_toks_init(&words);
            am_toks_split_py(&words, lines[i]);
            for (size_t k = 0; k < words.n; k++)
                am_toks_pushs(custom_sw, words.v[k]);
            am_toks_cleanup(&words);
        }
        free(lines);
        free(f.buf);
    }
    return 0;
}

/* Reads the i-th --xliff file (and its --xliff-mt partner) into *doc:
 * languages reconciled with the command line, MT hypotheses paired from
 * the pre-translated file. Returns 0, or 1/2 after printing an error. */
static int am_cli_xliff_read(am_cli *c, size_t f, am_xliff_doc *doc, am_cli_xlang *langs)
{
    const char *paths[2] = {c->xliff[f], c->nxliff_mt ? c->xliff_mt[f] : NULL};
    am_xliff_doc pre;
    memset(&pre, 0, sizeof pre);
    for (int k = 0; k < 2 && paths[k]; k++) {
        am_cli_file in = {.path = (char *)(uintptr_t)paths[k]};
        if (am_cli_load(c->err, &in))
            return 1;
        am_xliff_report rep;
        int rc = k == 0 ? am_xliff_parse(in.buf, in.len, doc, &rep)
                        : am_xliff_parse_mt(in.buf, in.len, &pre, &rep);
        free(in.buf);
        if (rc != AM_OK) {
            if (rep.line)
                fprintf(c->err, "adaptmon score: %s:%zu: %s\n", paths[k], rep.line, rep.msg);
            else
                fprintf(c->err, "adaptmon score: %s: %s\n", paths[k], rep.msg);
            return 1;
        }
        am_xliff_doc *d = k == 0 ? doc : &pre;
        rc = am_cli_xliff_lang(&c->cfg, &langs[0], 0, d->source_lang, paths[k], d->version, c->err);
        if (rc == 0)
            rc = am_cli_xliff_lang(&c->cfg, &langs[1], 1, d->target_lang, paths[k], d->version,
                                   c->err);
        if (rc) {
            am_xliff_free(&pre);
            return rc;
        }
    }
    if (paths[1]) {
        am_cli_xliff_pair(doc, &pre);
        am_xliff_free(&pre);
    }
    return 0;
}

/* Counts doc's skips and its segments without an MT candidate (moved to
 * the end of doc->segs and cut: they are not scored) into c->skips. */
static void am_cli_xliff_skips(am_cli *c, am_xliff_doc *doc)
{
    for (size_t i = 0; i < doc->nskips; i++)
        am_cli_skips_add(&c->skips, doc->skips[i].reason);
    size_t keep = 0;
    for (size_t i = 0; i < doc->nsegs; i++) {
        am_xliff_seg *x = &doc->segs[i];
        if (x->nhyp) {
            am_xliff_seg t = doc->segs[keep];
            doc->segs[keep++] = *x;
            *x = t;
            continue;
        }
        char why[sizeof x->dropped + 32];
        snprintf(why, sizeof why, "no MT candidate%s%s", x->dropped[0] ? ": " : "", x->dropped);
        am_cli_skips_add(&c->skips, why);
    }
    /* the cut segments stay allocated past nsegs until am_xliff_free */
    for (size_t i = keep; i < doc->nsegs; i++) {
        free(doc->segs[i].id);
        free(doc->segs[i].source);
        free(doc->segs[i].target);
        memset(&doc->segs[i], 0, sizeof doc->segs[i]);
    }
    doc->nsegs = keep;
}

/* XLIFF input: parses every --xliff file (paired with its --xliff-mt file)
 * into docs[0..nxliff) (caller frees each with am_xliff_free, and the
 * arrays), takes the files' languages when the command line gives none
 * (refusing a mismatch), counts the units not scored per reason (printed
 * on stderr), names the systems (the union of the files' MT systems, first
 * appearance first) into c->hyp, and builds the segments of the units with
 * an MT candidate (texts borrowed from docs; a system missing from a unit
 * scores ""), and the sessions: one per file, or per <file> element with
 * --by-file, as [first, first+n) ranges of segs. Returns 0, or 1 (2 for a
 * language mismatch) after printing an error; 1 when nothing is scored. */
int am_cli_xliff(am_cli *c, am_xliff_doc *docs, am_cli_seg **segs, size_t *nseg,
                 size_t **sess_first, size_t **sess_n, size_t *nsess)
{
    size_t total = 0, files = 0;
    am_cli_xlang langs[2] = {{c->cfg.source_lang[0] && strcmp(c->cfg.source_lang, "und"), NULL},
                             {c->cfg.target_lang[0] && strcmp(c->cfg.target_lang, "und"), NULL}};
    am_cli_skips_init(&c->skips);
    for (size_t f = 0; f < c->nxliff; f++) {
        int rc = am_cli_xliff_read(c, f, &docs[f], langs);
        if (rc)
            return rc;
        am_cli_xliff_skips(c, &docs[f]);
        for (size_t k = 0; k < docs[f].nsystems; k++) {
            size_t i = 0;
            while (i < c->nhyp && strcmp(c->hyp[i].name, docs[f].systems[k]))
                i++;
            if (i < c->nhyp)
                continue;
            if (c->nhyp == AM_CLI_MAX_SYS) {
                fprintf(c->err, "adaptmon score: more than %d MT systems\n", AM_CLI_MAX_SYS);
                return 1;
            }
            c->hyp[c->nhyp].name = am_xstrdup(docs[f].systems[k]);
            c->hyp[c->nhyp++].path = am_xstrdup(c->xliff[f]);
        }
        total += docs[f].nsegs;
        files += docs[f].nfiles ? docs[f].nfiles : 1;
    }
    am_cli_skips_print(&c->skips, total, c->err);
    if (total == 0 || c->nhyp == 0) {
        fprintf(c->err,
                "adaptmon score: nothing to score: no confirmed unit with an MT candidate "
                "(alt-trans, mtc:match type=\"mt\"%s) in the XLIFF input\n",
                c->nxliff_mt ? ", or the --xliff-mt file's unit of the same id" : "");
        return 1;
    }
    *segs = am_xcalloc(total ? total : 1, sizeof **segs);
    *sess_first = am_xcalloc(files + c->nxliff, sizeof **sess_first);
    *sess_n = am_xcalloc(files + c->nxliff, sizeof **sess_n);
    size_t k = 0;
    *nsess = 0;
    for (size_t f = 0; f < c->nxliff; f++) {
        size_t map[AM_XLIFF_MAX_SYSTEMS] = {0};
        for (size_t d = 0; d < docs[f].nsystems; d++)
            for (size_t i = 0; i < c->nhyp; i++)
                if (!strcmp(c->hyp[i].name, docs[f].systems[d]))
                    map[d] = i;
        for (size_t i = 0; i < docs[f].nsegs; i++, k++) {
            const am_xliff_seg *x = &docs[f].segs[i];
            if (*nsess == 0 || (c->by_file ? x->file != (*segs)[k - 1].doc || i == 0 : i == 0)) {
                (*sess_first)[*nsess] = k;
                (*nsess)++;
            }
            (*sess_n)[*nsess - 1]++;
            am_cli_seg *sg = &(*segs)[k];
            sg->id = x->id;
            sg->src = x->source;
            sg->ref = x->target;
            sg->doc = x->file;
            for (size_t h = 0; h < c->nhyp; h++)
                sg->hyp[h] = "";
            for (size_t h = 0; h < x->nhyp; h++)
                sg->hyp[map[x->sys[h]]] = x->hyp[h];
        }
    }
    *nseg = total;
    return 0;
}

/* A new, empty run for c's inputs (its XLIFF documents' slots allocated);
 * the caller owns it: am_cli_run_free, then free. */
am_cli_run *am_cli_run_new(const am_cli *c)
{
    am_cli_run *r = am_xcalloc(1, sizeof *r);
    am_gloss_init(&r->gloss);
    am_toks_init(&r->custom_sw);
    r->xdocs = c->nxliff ? am_xcalloc(c->nxliff, sizeof *r->xdocs) : NULL;
    return r;
}

void am_cli_run_free(const am_cli *c, am_cli_run *r)
{
    for (size_t f = 0; f < c->nxliff; f++)
        am_xliff_free(&r->xdocs[f]);
    free(r->xdocs);
    free(r->sess_first);
    free(r->sess_n);
    free(r->sess_doc);
    free(r->totals);
    free(r->doc_totals);
    am_score_ws_free(r->ws);
    am_scorer_free(r->scorer);
    free(r->segs);
    free(r->line_ids);
    free(r->ref_lines);
    free(r->src_lines);
    for (size_t i = 0; i < AM_CLI_MAX_XREF; i++)
        free(r->xref_lines[i]);
    free(r->xref_flat);
    for (size_t i = 0; i < AM_CLI_MAX_SYS; i++) {
        free(r->hyp_lines[i]);
        am_sgml_free(&r->shyp[i]);
    }
    am_sgml_free(&r->sref);
    am_sgml_free(&r->ssrc);
    am_gloss_cleanup(&r->gloss);
    am_vocab_free(r->background);
    am_toks_cleanup(&r->custom_sw);
}

/* One session over segs[0..n) (no --by-doc). */
static void am_cli_one_session(am_cli_run *r)
{
    r->sess_first = am_xcalloc(1, sizeof *r->sess_first);
    r->sess_n = am_xcalloc(1, sizeof *r->sess_n);
    r->sess_n[0] = r->nseg;
    r->nsess = 1;
}

/* SGML input: loads the files, pairs the segments by id in reference order
 * and makes the sessions (one, or one per document with --by-doc). Names
 * the unnamed systems by their sysid. Returns 0 or 1 after an error. */
int am_cli_read_sgml(am_cli *c, am_cli_run *r)
{
    if (am_cli_load(c->err, &c->sgm_ref) || am_cli_sgml(c->err, &c->sgm_ref, &r->sref) ||
        (c->sgm_src.path &&
         (am_cli_load(c->err, &c->sgm_src) || am_cli_sgml(c->err, &c->sgm_src, &r->ssrc))))
        return 1;
    const char *sysids[AM_CLI_MAX_SYS] = {0};
    for (size_t i = 0; i < c->nhyp; i++) {
        if (am_cli_load(c->err, &c->hyp[i]) || am_cli_sgml(c->err, &c->hyp[i], &r->shyp[i]))
            return 1;
        sysids[i] = r->shyp[i].ndocs ? r->shyp[i].docs[0].sysid : NULL;
    }
    am_cli_default_names(c, sysids);
    if (c->cfg.profile == AM_PROFILE_ALAM2021)
        return 0;
    r->nseg = r->sref.nsegs;
    r->segs = am_xcalloc(r->nseg ? r->nseg : 1, sizeof *r->segs);
    for (size_t k = 0; k < r->nseg; k++) {
        const am_sgml_seg *rs = &r->sref.segs[k];
        am_cli_seg *sg = &r->segs[k];
        sg->id = rs->id;
        sg->ref = rs->text;
        sg->doc = rs->doc;
        sg->docid = r->sref.docs[rs->doc].docid;
        sg->ref_seg = rs;
        if (c->sgm_src.path) {
            size_t j = am_sgml_find_seg(&r->ssrc, rs->id);
            if (j == (size_t)-1) {
                fprintf(c->err, "adaptmon score: %s: no segment with id '%s'\n", c->sgm_src.path,
                        rs->id);
                return 1;
            }
            sg->src = r->ssrc.segs[j].text;
        }
        for (size_t i = 0; i < c->nhyp; i++) {
            size_t j = am_sgml_find_seg(&r->shyp[i], rs->id);
            sg->hyp[i] = j == (size_t)-1 ? "" : r->shyp[i].segs[j].text;
        }
    }
    for (size_t i = 0; i < c->nhyp; i++)
        for (size_t j = 0; j < r->shyp[i].nsegs; j++)
            if (am_sgml_find_seg(&r->sref, r->shyp[i].segs[j].id) == (size_t)-1) {
                fprintf(c->err, "adaptmon score: %s: segment id '%s' is not in the reference\n",
                        c->hyp[i].path, r->shyp[i].segs[j].id);
                return 1;
            }
    if (!c->by_doc) {
        am_cli_one_session(r);
        return 0;
    }
    size_t nd = r->sref.ndocs;
    r->sess_first = am_xcalloc(nd + 1, sizeof *r->sess_first);
    r->sess_n = am_xcalloc(nd + 1, sizeof *r->sess_n);
    r->sess_doc = am_xcalloc(nd + 1, sizeof *r->sess_doc);
    for (size_t d = 0; d < nd; d++) {
        r->sess_first[d] = r->sref.docs[d].first_seg;
        r->sess_n[d] = r->sref.docs[d].nsegs;
        r->sess_doc[d] = r->sref.docs[d].docid ? r->sref.docs[d].docid : "";
    }
    r->nsess = nd;
    return 0;
}

/* The references after the first: every file must have the reference's
 * nseg lines (sacreBLEU refuses files of different lengths too). Fills
 * r->xref_flat. Returns 0 or 1 after an error. */
static int am_cli_read_xrefs(am_cli *c, am_cli_run *r, size_t nseg)
{
    for (size_t j = 0; j < c->nxref; j++) {
        if (am_cli_load(c->err, &c->xref[j]) || am_cli_validate(c->err, &c->xref[j]))
            return 1;
        size_t n = am_cli_lines(&c->xref[j], &r->xref_lines[j]);
        if (n != nseg) {
            fprintf(c->err, "adaptmon score: reference %s has %zu lines but %s has %zu\n",
                    c->xref[j].path, n, c->ref.path, nseg);
            return 1;
        }
    }
    if (c->nxref == 0)
        return 0;
    r->xref_flat = am_xcalloc(nseg * c->nxref + 1, sizeof *r->xref_flat);
    for (size_t k = 0; k < nseg; k++)
        for (size_t j = 0; j < c->nxref; j++)
            r->xref_flat[k * c->nxref + j] = r->xref_lines[j][k];
    return 0;
}

/* Plain-text input: one segment per line, equal line counts; segment ids
 * are the line numbers. Returns 0 or 1 after an error. */
int am_cli_read_plain(am_cli *c, am_cli_run *r)
{
    if (am_cli_load(c->err, &c->ref) || am_cli_validate(c->err, &c->ref) ||
        (c->src.path && (am_cli_load(c->err, &c->src) || am_cli_validate(c->err, &c->src))))
        return 1;
    size_t nseg = am_cli_lines(&c->ref, &r->ref_lines);
    size_t nsrc = c->src.path ? am_cli_lines(&c->src, &r->src_lines) : nseg;
    if (nsrc != nseg) {
        fprintf(c->err, "adaptmon score: %s has %zu lines but %s has %zu\n", c->src.path, nsrc,
                c->ref.path, nseg);
        return 1;
    }
    for (size_t i = 0; i < c->nhyp; i++) {
        if (am_cli_load(c->err, &c->hyp[i]) || am_cli_validate(c->err, &c->hyp[i]))
            return 1;
        size_t nh = am_cli_lines(&c->hyp[i], &r->hyp_lines[i]);
        if (nh != nseg) {
            fprintf(c->err, "adaptmon score: %s has %zu lines but %s has %zu\n", c->hyp[i].path, nh,
                    c->ref.path, nseg);
            return 1;
        }
    }
    if (am_cli_read_xrefs(c, r, nseg))
        return 1;
    am_cli_default_names(c, NULL);
    r->nseg = nseg;
    r->segs = am_xcalloc(nseg ? nseg : 1, sizeof *r->segs);
    r->line_ids = am_xcalloc(nseg ? nseg : 1, sizeof *r->line_ids);
    for (size_t k = 0; k < nseg; k++) {
        snprintf(r->line_ids[k], sizeof r->line_ids[k], "%zu", k + 1);
        r->segs[k].id = r->line_ids[k];
        r->segs[k].ref = r->ref_lines[k];
        r->segs[k].xrefs = c->nxref ? r->xref_flat + k * c->nxref : NULL;
        r->segs[k].src = r->src_lines ? r->src_lines[k] : NULL;
        for (size_t i = 0; i < c->nhyp; i++)
            r->segs[k].hyp[i] = r->hyp_lines[i][k];
    }
    am_cli_one_session(r);
    return 0;
}

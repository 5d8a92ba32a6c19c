/*
 * xliff12.c — XLIFF 1.2 units: one <trans-unit> (unsegmented or split by
 * <mrk mtype="seg">) turned into segments, with the confirmation and MT
 * origin rules of Trados, memoQ and the standard (see xliff.h).
 */
#include "xliff_int.h"

#include "xliff.h"

#include "lang.h"
#include "text.h"
#include "textenc.h"
#include "xmlsafe.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <libxml/xmlreader.h>

/* ---- XLIFF 1.2 ------------------------------------------------------------------ */

/* Trados' <sdl:seg id=mid …> of trans-unit tu (mid NULL: the first);
 * borrowed or NULL. */
static xmlNode *xl_sdl_seg(xmlNode *tu, const char *mid)
{
    for (xmlNode *c = tu->children; c; c = am_xmlsafe_walk(c, tu, 1)) {
        if (xl_is(c, "seg") && c->parent && xl_is(c->parent, "seg-defs")) {
            const char *id = xl_attr(c, "id", 0);
            if (!mid || (id && !strcmp(id, mid)))
                return c;
        }
    }
    return NULL;
}

/* The conf of Trados' <sdl:seg> of the segment; borrowed or NULL. */
static const char *xl_sdl_conf(xmlNode *tu, const char *mid)
{
    xmlNode *sg = xl_sdl_seg(tu, mid);
    return sg ? xl_attr(sg, "conf", 0) : NULL;
}

/* Whether the target of a 1.2 segment of a pre-translated file is machine
 * translation, by the CAT tools' origin markers (see am_xliff_mt_each):
 * returns 1 with *name the system (borrowed; "mt" when unnamed), or 0 with
 * the reason in why (size cap) when a marker says another origin. */
static int xl_mt_origin12(xmlNode *tu, xmlNode *target, const char *mid, const char **name,
                          char *why, size_t cap)
{
    static const char *const tm_sq[] = {
        "exact-match",          "fuzzy-match",         "id-match",
        "leveraged-glossary",   "leveraged-inherited", "leveraged-mt",
        "leveraged-repository", "leveraged-tm"};
    *name = "mt";
    xmlNode *sg = xl_sdl_seg(tu, mid);
    const char *o = sg ? xl_attr(sg, "origin", 0) : NULL;
    if (o && *o) { /* Trados: sdl:seg origin, origin-system */
        if (am_ascii_ieq(o, "mt") || am_ascii_ieq(o, "nmt") || am_ascii_ieq(o, "adaptive-mt")) {
            const char *sys = xl_attr(sg, "origin-system", 0);
            *name = sys && *sys ? sys : "mt";
            return 1;
        }
        snprintf(why, cap, "pre-translated from %.40s, not MT (Trados sdl:seg origin)", o);
        return 0;
    }
    const char *po = xl_attr(tu, "trans-origin", 1); /* Phrase m:trans-origin */
    if (po && *po && !am_ascii_ieq(po, "null")) {
        if (am_ascii_ieq(po, "mt"))
            return 1;
        snprintf(why, cap, "pre-translated from %.40s, not MT (Phrase m:trans-origin)", po);
        return 0;
    }
    for (const xmlAttr *a = tu->properties; a; a = a->next) { /* memoQ mq:status */
        if (!a->ns || strcmp((const char *)a->name, "status"))
            continue;
        const char *v = xl_attr(tu, "status", 1);
        if (v && am_ascii_ieq(v, "MachineTranslated"))
            return 1;
        if (v && am_ascii_ieq(v, "PreTranslated")) {
            snprintf(why, cap, "pre-translated from a TM, not MT (memoQ mq:status)");
            return 0;
        }
    }
    const char *sq = target ? xl_attr(target, "state-qualifier", 0) : NULL;
    if (sq && xl_in_list(sq, tm_sq, sizeof tm_sq / sizeof tm_sq[0]) && strcmp(sq, "leveraged-mt")) {
        snprintf(why, cap, "pre-translated from a TM, not MT (state-qualifier=%.32s)", sq);
        return 0;
    }
    return 1; /* no marker: the file is the MT pass */
}

/* Whether a 1.2 segment is confirmed (see xliff.h). */
static int xl_confirmed12(xmlNode *tu, xmlNode *target, const char *mid)
{
    static const char *const states[] = {"final", "signed-off", "translated"};
    static const char *const sdl[] = {"Translated", "ApprovedTranslation", "ApprovedSignOff"};
    static const char *const mq[] = {"ManuallyConfirmed", "Reviewer1Confirmed",
                                     "Reviewer2Confirmed", "Proofread", "Confirmed"};
    static const char *const yes[] = {"1", "true", "yes"};
    if (target && xl_in_list(xl_attr(target, "state", 0), states, 3))
        return 1;
    const char *ap = xl_attr(tu, "approved", 0);
    if (ap && !strcmp(ap, "yes"))
        return 1;
    if (xl_in_list(xl_sdl_conf(tu, mid), sdl, 3))
        return 1;
    for (const xmlAttr *a = tu->properties; a; a = a->next) {
        if (!a->ns)
            continue;
        const char *v = xl_attr(tu, (const char *)a->name, 1);
        if (!strcmp((const char *)a->name, "status") && xl_in_list(v, mq, 5))
            return 1;
        if (!strcmp((const char *)a->name, "confirmed") && xl_in_list(v, yes, 3))
            return 1;
    }
    return 0;
}

/* The header <phase> named name (borrowed) or NULL. */
static xmlNode *xl_phase(const xl_job *j, const char *name)
{
    if (!j->header || !name)
        return NULL;
    for (xmlNode *c = j->header->children; c; c = am_xmlsafe_walk(c, j->header, 1))
        if (xl_is(c, "phase")) {
            const char *pn = xl_attr(c, "phase-name", 0);
            if (pn && !strcmp(pn, name))
                return c;
        }
    return NULL;
}

static int xl_mt_process(const char *p)
{
    if (!p)
        return 0;
    if (am_ascii_ieq(p, "mt"))
        return 1;
    return strncmp(p, "machine", 7) == 0 || strncmp(p, "Machine", 7) == 0 ||
           strncmp(p, "MT ", 3) == 0 || strncmp(p, "mt ", 3) == 0;
}

/* True when a tool or origin name says machine translation: "mt" or
 * "MT-…"/"MT …"/"…-MT" (any case), or a name holding "machine". */
static int xl_mt_word(const char *v)
{
    if (!v || !*v)
        return 0;
    size_t n = strlen(v);
    if (am_ascii_ieq(v, "mt") || (n > 3 && (v[0] == 'm' || v[0] == 'M') &&
                                  (v[1] == 't' || v[1] == 'T') && (v[2] == '-' || v[2] == ' ')))
        return 1;
    if (n > 3 && (v[n - 3] == '-' || v[n - 3] == ' ') && (v[n - 2] == 'm' || v[n - 2] == 'M') &&
        (v[n - 1] == 't' || v[n - 1] == 'T'))
        return 1;
    for (size_t i = 0; i + 7 <= n; i++)
        if (!strncmp(v + i, "machine", 7) || !strncmp(v + i, "Machine", 7))
            return 1;
    return 0;
}

/* The language of alt-trans a: its <target>'s xml:lang, else its own
 * (borrowed), else NULL. */
static const char *xl_alt_lang(xmlNode *a)
{
    xmlNode *tgt = xl_child(a, "target");
    const char *l = tgt ? xl_attr(tgt, "lang", 2) : NULL;
    if (!l || !*l)
        l = xl_attr(a, "lang", 2);
    return l && *l ? l : NULL;
}

/* If alt-trans a is an MT proposal in the target language, its system
 * name (borrowed; "mt" when it has none); else NULL with the reason in why
 * (size cap). */
static const char *xl_mt_name(const xl_job *j, xmlNode *a, char *why, size_t cap)
{
    const char *type = xl_attr(a, "alttranstype", 0);
    if (type && strcmp(type, "proposal")) {
        snprintf(why, cap, "alt-trans of type %.40s, not an MT proposal", type);
        return NULL;
    }
    if (xl_wrong_lang(j, "alt-trans", xl_alt_lang(a), why, cap))
        return NULL;
    const char *origin = xl_attr(a, "origin", 0), *tool = xl_attr(a, "tool-id", 0);
    const char *mtype = xl_attr(a, "matchType", 1); /* Okapi okp:matchType */
    xmlNode *ph = xl_phase(j, xl_attr(a, "phase-name", 0));
    xmlNode *tgt = xl_child(a, "target");
    const char *sq = tgt ? xl_attr(tgt, "state-qualifier", 0) : NULL;
    int mt = (sq && !strcmp(sq, "mt-suggestion")) ||
             (ph && xl_mt_process(xl_attr(ph, "process-name", 0))) || xl_mt_word(origin) ||
             xl_mt_word(tool) || (mtype && am_ascii_ieq(mtype, "mt")) ||
             ((origin || tool) && !xl_attr(a, "match-quality", 0));
    if (!mt) {
        snprintf(why, cap, "%s",
                 xl_attr(a, "match-quality", 0)
                     ? "alt-trans not marked as MT (a TM match: match-quality, no MT origin)"
                     : "alt-trans not marked as MT (no origin, tool-id, MT phase or "
                       "state-qualifier)");
        return NULL;
    }
    if (origin && *origin)
        return origin;
    if (tool && *tool)
        return tool;
    const char *pt = ph ? xl_attr(ph, "tool-id", 0) : NULL;
    if (!pt && ph)
        pt = xl_attr(ph, "tool", 0);
    return pt && *pt ? pt : "mt";
}

/* One 1.2 segment: mid NULL for an unsegmented trans-unit, else the mrk's
 * mid (src/tgt: the seg mrk elements or the source/target). */
static int xl_seg12(xl_job *j, xmlNode *tu, const char *id, const char *mid, xmlNode *src,
                    xmlNode *tgt, xmlNode *tgt_el, int single)
{
    char *target = tgt ? xl_text(tgt, &j->tmp) : NULL;
    if (!target || !*target) {
        free(target);
        xl_skip(j, id, "no target");
        return AM_OK;
    }
    if (j->mt_mode) {
        const char *sys;
        char why[112];
        if (!xl_mt_origin12(tu, tgt_el, mid, &sys, why, sizeof why)) {
            free(target);
            xl_skip(j, id, why);
            return AM_OK;
        }
        am_xliff_seg *s = xl_push(j, id, xl_text(src, &j->tmp), target);
        return xl_add_hyp(j, s, sys, am_xstrdup(target), xl_line(tu, j->line_off));
    }
    if (!xl_confirmed12(tu, tgt_el, mid)) {
        free(target);
        xl_skip(j, id, "unconfirmed");
        return AM_OK;
    }
    am_xliff_seg *s = xl_push(j, id, xl_text(src, &j->tmp), target);
    for (xmlNode *a = tu->children; a; a = a->next) {
        if (!xl_is(a, "alt-trans"))
            continue;
        char why[sizeof s->dropped];
        const char *name = xl_mt_name(j, a, why, sizeof why);
        xmlNode *at = xl_child(a, "target");
        if (!name && !s->dropped[0])
            memcpy(s->dropped, why, sizeof why);
        if (!name || !at)
            continue;
        const char *amid = xl_attr(a, "mid", 0);
        xmlNode *text_el = NULL;
        if (mid) {
            if (amid)
                text_el = strcmp(amid, mid) ? NULL : at;
            else
                text_el = xl_find_mrk(at, mid);
            if (!text_el && !amid && single)
                text_el = at;
        } else {
            text_el = at;
        }
        if (!text_el)
            continue;
        int rc = xl_add_hyp(j, s, name, xl_text(text_el, &j->tmp), xl_line(a, j->line_off));
        if (rc)
            return rc;
    }
    if (!s->nhyp && !s->dropped[0])
        snprintf(s->dropped, sizeof s->dropped, "the unit has no alt-trans");
    return AM_OK;
}

int xl_unit12(xl_job *j, xmlNode *tu)
{
    const char *id;
    int rc = xl_unit_open(j, tu, &id);
    if (rc || !id)
        return rc;
    xmlNode *src = xl_child(tu, "source"), *tgt = xl_child(tu, "target");
    xmlNode *segsrc = xl_child(tu, "seg-source");
    size_t nmrk = 0;
    if (segsrc)
        for (xmlNode *c = segsrc->children; c; c = am_xmlsafe_walk(c, segsrc, 1))
            if (xl_is(c, "mrk") && xl_attr(c, "mtype", 0) &&
                !strcmp(xl_attr(c, "mtype", 0), "seg") && xl_attr(c, "mid", 0))
                nmrk++;
    if (nmrk == 0)
        return xl_seg12(j, tu, id, NULL, src, tgt, tgt, 1);
    am_buf sid;
    am_buf_init(&sid);
    for (xmlNode *c = segsrc->children; c && rc == AM_OK; c = am_xmlsafe_walk(c, segsrc, 1)) {
        if (!(xl_is(c, "mrk") && xl_attr(c, "mtype", 0) && !strcmp(xl_attr(c, "mtype", 0), "seg")))
            continue;
        const char *mid = xl_attr(c, "mid", 0);
        if (!mid)
            continue;
        am_buf_reset(&sid);
        am_buf_appends(&sid, id);
        if (nmrk > 1) {
            am_buf_appendc(&sid, '.');
            am_buf_appends(&sid, mid);
        }
        rc = xl_seg12(j, tu, am_buf_str(&sid), mid, c, xl_find_mrk(tgt, mid), tgt, nmrk == 1);
    }
    am_buf_cleanup(&sid);
    return rc;
}

/*
 * xliff2.c — XLIFF 2.x units: one <unit> turned into segments, with the
 * MT candidates of its <mtc:matches> (see xliff.h).
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

/* ---- XLIFF 2.x ------------------------------------------------------------------ */

/* True when match reference ref ("#s1", "#/f=f1/u=u1/s1", "s1") names
 * segment id sid. */
static int xl_ref_names(const char *ref, const char *sid)
{
    if (!ref || !sid)
        return 0;
    const char *r = strrchr(ref, '/');
    r = r ? r + 1 : (ref[0] == '#' ? ref + 1 : ref);
    const char *eq = strchr(r, '=');
    if (eq)
        r = eq + 1;
    return strcmp(r, sid) == 0;
}

int xl_unit20(xl_job *j, xmlNode *u)
{
    const char *id;
    int rc = xl_unit_open(j, u, &id);
    if (rc || !id)
        return rc;
    size_t nseg = 0;
    for (xmlNode *c = u->children; c; c = c->next)
        nseg += xl_is(c, "segment");
    xmlNode *matches = xl_child(u, "matches");
    static const char *const states[] = {"translated", "reviewed", "final"};
    am_buf sid;
    am_buf_init(&sid);
    size_t idx = 0;
    for (xmlNode *sg = u->children; sg && rc == AM_OK; sg = sg->next) {
        if (!xl_is(sg, "segment"))
            continue;
        idx++;
        const char *segid = xl_attr(sg, "id", 0);
        am_buf_reset(&sid);
        am_buf_appends(&sid, id);
        if (nseg > 1) {
            if (segid)
                am_buf_printf(&sid, ".%s", segid);
            else
                am_buf_printf(&sid, ".%zu", idx);
        }
        const char *sidv = am_buf_str(&sid);
        char *target = xl_text(xl_child(sg, "target"), &j->tmp);
        if (!xl_child(sg, "target") || !*target) {
            free(target);
            xl_skip(j, sidv, "no target");
            continue;
        }
        if (j->mt_mode) { /* 2.x has no origin marker on a target */
            am_xliff_seg *s = xl_push(j, sidv, xl_text(xl_child(sg, "source"), &j->tmp), target);
            rc = xl_add_hyp(j, s, "mt", am_xstrdup(target), xl_line(sg, j->line_off));
            continue;
        }
        if (!xl_in_list(xl_attr(sg, "state", 0), states, 3)) {
            free(target);
            xl_skip(j, sidv, "unconfirmed");
            continue;
        }
        am_xliff_seg *s = xl_push(j, sidv, xl_text(xl_child(sg, "source"), &j->tmp), target);
        for (xmlNode *m = matches ? matches->children : NULL; m && rc == AM_OK; m = m->next) {
            if (!xl_is(m, "match"))
                continue;
            const char *type = xl_attr(m, "type", 0);
            xmlNode *mt = xl_child(m, "target");
            if (!type || strcmp(type, "mt") || !mt)
                continue;
            if (nseg > 1 && !xl_ref_names(xl_attr(m, "ref", 0), segid))
                continue;
            if (xl_wrong_lang(j, "mtc:match", xl_attr(mt, "lang", 2), s->dropped,
                              s->dropped[0] ? 0 : sizeof s->dropped))
                continue;
            const char *origin = xl_attr(m, "origin", 0);
            rc = xl_add_hyp(j, s, origin && *origin ? origin : "mt", xl_text(mt, &j->tmp),
                            xl_line(m, j->line_off));
        }
        if (!s->nhyp && !s->dropped[0])
            snprintf(s->dropped, sizeof s->dropped, "the unit has no <mtc:match type=\"mt\">");
    }
    am_buf_cleanup(&sid);
    return rc;
}

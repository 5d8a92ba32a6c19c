/*
 * cli_xliff.c — languages, two-file pairing and skip counts of
 * `adaptmon score --xliff` (see cli_xliff.h).
 */
#include "cli_xliff.h"

#include "lang.h"
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

int am_cli_xliff_lang(am_config *cfg, am_cli_xlang *st, int target, const char *file_lang,
                      const char *path, int version, FILE *err)
{
    const char *opt = target ? "target_lang" : "source_lang";
    const char *flag = target ? "--target-lang" : "--source-lang";
    const char *attr = version == 20 ? (target ? "trgLang" : "srcLang")
                                     : (target ? "target-language" : "source-language");
    char *cur = target ? cfg->target_lang : cfg->source_lang;
    if (!file_lang || !*file_lang)
        return 0;
    if (!st->given) {
        am_buf ebuf;
        am_buf_init(&ebuf);
        int rc = am_config_set(cfg, opt, file_lang, &ebuf);
        am_buf_cleanup(&ebuf);
        if (rc != AM_OK) {
            fprintf(err, "adaptmon score: %s: %s=\"%s\" is not a language code; give %s\n", path,
                    attr, file_lang, flag);
            return 2;
        }
        st->given = 1;
        st->from = path;
        return 0;
    }
    char canon[64];
    if (am_lang_canonical(file_lang, canon, sizeof canon, NULL) == AM_OK &&
        am_lang_same(cur, canon))
        return 0; /* memoQ's "fre-FR" is fr */
    if (st->from)
        fprintf(err,
                "adaptmon score: %s declares %s=\"%s\" but %s declares %s (one run scores one "
                "language pair)\n",
                path, attr, file_lang, st->from, cur);
    else
        fprintf(err,
                "adaptmon score: %s declares %s=\"%s\" but the command line says %s %s; fix "
                "the option or the file\n",
                path, attr, file_lang, flag, cur);
    return 2;
}

void am_cli_xliff_pair(am_xliff_doc *final, am_xliff_doc *pre)
{
    am_vocab *ids = am_vocab_new();
    for (size_t i = 0; i < pre->nsegs; i++)
        if (!am_vocab_get(ids, pre->segs[i].id, NULL))
            am_vocab_add(ids, pre->segs[i].id, (int64_t)i + 1);
    for (size_t i = 0; i < pre->nskips; i++) /* negative: skipped in pre */
        if (!am_vocab_get(ids, pre->skips[i].id, NULL))
            am_vocab_add(ids, pre->skips[i].id, -(int64_t)i - 1);
    for (size_t i = 0; i < final->nsegs; i++) {
        am_xliff_seg *s = &final->segs[i];
        for (size_t k = 0; k < s->nhyp; k++)
            free(s->hyp[k]);
        s->nhyp = 0;
        int64_t at = 0;
        if (!am_vocab_get(ids, s->id, &at)) {
            snprintf(s->dropped, sizeof s->dropped, "no unit with this id in the MT file");
            continue;
        }
        if (at < 0) { /* the MT file's reason (a TM pre-translation, …) */
            snprintf(s->dropped, sizeof s->dropped, "%s", pre->skips[-at - 1].reason);
            continue;
        }
        am_xliff_seg *p = &pre->segs[at - 1];
        for (size_t k = 0; k < p->nhyp; k++) {
            s->sys[s->nhyp] = p->sys[k];
            s->hyp[s->nhyp++] = p->hyp[k]; /* moved */
            p->hyp[k] = NULL;
        }
        p->nhyp = 0;
    }
    am_vocab_free(ids);
    /* the systems are pre's now (final's alt-trans names are not used) */
    for (size_t i = 0; i < final->nsystems; i++)
        free(final->systems[i]);
    free(final->systems);
    final->systems = pre->systems;
    final->nsystems = pre->nsystems;
    pre->systems = NULL;
    pre->nsystems = 0;
}

void am_cli_skips_init(am_cli_skips *k)
{
    k->reasons = json_object();
    k->total = 0;
}

void am_cli_skips_cleanup(am_cli_skips *k)
{
    json_decref(k->reasons);
    k->reasons = NULL;
}

void am_cli_skips_add(am_cli_skips *k, const char *reason)
{
    json_t *n = json_object_get(k->reasons, reason);
    json_object_set_new(k->reasons, reason, json_integer(n ? json_integer_value(n) + 1 : 1));
    k->total++;
}

void am_cli_skips_print(const am_cli_skips *k, size_t scored, FILE *out)
{
    fprintf(out, "adaptmon score: %zu segment%s scored, %zu skipped", scored,
            scored == 1 ? "" : "s", k->total);
    const char *reason;
    json_t *n;
    const char *sep = ": ";
    json_object_foreach(k->reasons, reason, n)
    {
        fprintf(out, "%s%lld %s", sep, (long long)json_integer_value(n), reason);
        sep = "; ";
    }
    fputc('\n', out);
}

json_t *am_cli_skips_json(const am_cli_skips *k)
{
    return json_pack("{sIsO}", "total", (json_int_t)k->total, "reasons", k->reasons);
}

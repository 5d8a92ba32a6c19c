/* stopwords.c — stopword sets (see stopwords.h), built on am_vocab. */
#include "stopwords.h"

#include <stdlib.h>
#include <string.h>

#include "stopwords_data.h"
#include "vocab.h"

struct am_sw {
    am_vocab *set;
};

int am_sw_lang(const char *code, char *out, size_t outsz)
{
    if (!code || !out)
        return AM_ERR_INVALID;
    size_t n = 0;
    while (code[n] && code[n] != '-' && code[n] != '_')
        n++;
    /* BCP 47 primary subtags are 2-3 letters (5-8 for registered ones). */
    if (n < 2 || n > 8 || n + 1 > outsz)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        char c = code[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c < 'a' || c > 'z')
            return AM_ERR_INVALID;
        out[i] = c;
    }
    out[n] = '\0';
    /* What follows the separator must be a non-empty subtag list. */
    if (code[n] && (!code[n + 1] || code[n + 1] == '-' || code[n + 1] == '_'))
        return AM_ERR_INVALID;
    return AM_OK;
}

/* Binary search in the generated table (sorted by source, lang). */
static const am_sw_list *sw_find(const char *source, const char *lang)
{
    size_t lo = 0, hi = am_sw_nlists;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const am_sw_list *l = &am_sw_lists[mid];
        int c = strcmp(l->source, source);
        if (c == 0)
            c = strcmp(l->lang, lang);
        if (c == 0)
            return l;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *am_sw_default_source(const char *lang)
{
    char primary[16];
    if (!lang || am_sw_lang(lang, primary, sizeof primary) != AM_OK)
        return "none";
    if (sw_find("snowball", primary))
        return "snowball";
    if (sw_find("iso", primary))
        return "iso";
    return "none";
}

/* Whether kind produces at least one word of l as a token (kinds that
 * need a model are taken to). */
static int sw_any_token(const am_sw_list *l, enum am_tok_kind kind)
{
    if (!l)
        return 0;
    if (kind == AM_TOK_JA_MECAB || kind == AM_TOK_ZH_FRISO)
        return 1;
    for (size_t i = 0; i < l->n; i++)
        if (am_sw_one_token(kind, NULL, l->words[i]))
            return 1;
    return 0;
}

const char *am_sw_default_source_for(const char *lang, enum am_tok_kind kind)
{
    char primary[16];
    if (!lang || am_sw_lang(lang, primary, sizeof primary) != AM_OK)
        return "none";
    if (sw_any_token(sw_find("snowball", primary), kind))
        return "snowball";
    if (sw_any_token(sw_find("iso", primary), kind))
        return "iso";
    return "none";
}

/* Adds one word, normalized; tmp is scratch. Empty words are skipped. */
static int sw_add(am_sw *sw, const char *word, enum am_norm norm, int casefold, am_buf *tmp)
{
    if (!*word)
        return AM_OK;
    if (norm == AM_NORM_NONE && !casefold) {
        am_vocab_insert(sw->set, word, 1);
        return AM_OK;
    }
    int rc = am_text_normalize(word, norm, casefold, tmp);
    if (rc != AM_OK)
        return rc;
    if (tmp->len > 0)
        am_vocab_insertn(sw->set, am_buf_str(tmp), tmp->len, 1);
    return AM_OK;
}

static am_sw *sw_new(void)
{
    am_sw *sw = am_xmalloc(sizeof *sw);
    sw->set = am_vocab_new();
    return sw;
}

int am_sw_builtin(const char *source, const char *lang, enum am_norm norm, int casefold,
                  am_sw **out)
{
    return am_sw_builtin_keep(source, lang, norm, casefold, NULL, NULL, out);
}

int am_sw_one_token(enum am_tok_kind kind, const am_tok_ctx *ctx, const char *word)
{
    am_toks t;
    am_toks_init(&t);
    int one =
        am_tok_split_ctx(kind, ctx, word, &t) == AM_OK && t.n == 1 && strcmp(t.v[0], word) == 0;
    am_toks_cleanup(&t);
    return one;
}

/* The tokenizer of am_sw_builtin_for, as the am_sw_keep_fn context. */
typedef struct sw_tok {
    enum am_tok_kind kind;
    const am_tok_ctx *ctx;
} sw_tok;

static int sw_keep_kind(void *ctx, const char *word)
{
    const sw_tok *t = ctx;
    return am_sw_one_token(t->kind, t->ctx, word);
}

int am_sw_builtin_for(const char *source, const char *lang, enum am_tok_kind kind,
                      const am_tok_ctx *ctx, enum am_norm norm, int casefold, am_sw **out)
{
    sw_tok t = {kind, ctx};
    return am_sw_builtin_keep(source, lang, norm, casefold, sw_keep_kind, &t, out);
}

int am_sw_builtin_keep(const char *source, const char *lang, enum am_norm norm, int casefold,
                       am_sw_keep_fn keep, void *keep_ctx, am_sw **out)
{
    if (!source || !out)
        return AM_ERR_INVALID;
    *out = NULL;
    if (norm != AM_NORM_NFKC && norm != AM_NORM_NFC && norm != AM_NORM_NONE)
        return AM_ERR_INVALID;
    if (strcmp(source, "none") == 0) {
        *out = sw_new();
        return AM_OK;
    }
    if (strcmp(source, "snowball") != 0 && strcmp(source, "iso") != 0)
        return AM_ERR_INVALID;
    char primary[16];
    if (!lang || am_sw_lang(lang, primary, sizeof primary) != AM_OK)
        return AM_ERR_INVALID;
    const am_sw_list *l = sw_find(source, primary);
    if (!l)
        return AM_ERR_NOTFOUND;
    am_sw *sw = sw_new();
    am_buf tmp;
    am_buf_init(&tmp);
    for (size_t i = 0; i < l->n; i++) {
        if (keep && !keep(keep_ctx, l->words[i]))
            continue;
        int rc = sw_add(sw, l->words[i], norm, casefold, &tmp);
        if (rc != AM_OK) {
            am_buf_cleanup(&tmp);
            am_sw_free(sw);
            return rc;
        }
    }
    am_buf_cleanup(&tmp);
    *out = sw;
    return AM_OK;
}

int am_sw_from_words(const char *const *words, size_t n, enum am_norm norm, int casefold,
                     am_sw **out)
{
    if (!out || (n > 0 && !words))
        return AM_ERR_INVALID;
    *out = NULL;
    if (norm != AM_NORM_NFKC && norm != AM_NORM_NFC && norm != AM_NORM_NONE)
        return AM_ERR_INVALID;
    am_sw *sw = sw_new();
    am_buf tmp;
    am_buf_init(&tmp);
    int rc = AM_OK;
    for (size_t i = 0; i < n && rc == AM_OK; i++) {
        if (!words[i]) {
            rc = AM_ERR_INVALID;
            break;
        }
        if (am_text_validate(words[i], strlen(words[i]), NULL) != AM_OK) {
            rc = AM_ERR_UTF8;
            break;
        }
        rc = sw_add(sw, words[i], norm, casefold, &tmp);
    }
    am_buf_cleanup(&tmp);
    if (rc != AM_OK) {
        am_sw_free(sw);
        return rc;
    }
    *out = sw;
    return AM_OK;
}

int am_sw_contains(const am_sw *sw, const char *word)
{
    return sw && am_vocab_contains(sw->set, word);
}

size_t am_sw_size(const am_sw *sw)
{
    return sw ? am_vocab_count(sw->set) : 0;
}

void am_sw_free(am_sw *sw)
{
    if (!sw)
        return;
    am_vocab_free(sw->set);
    free(sw);
}

/*
 * sess_share.c — compiled scorers shared between session runtimes.
 *
 * Thousands of sessions of one platform usually score with the same
 * options and the same glossary. Each runtime used to compile its own:
 * past the cache's count bound every POST of a session posting in turn
 * re-parsed the stored glossary JSON (jansson: 48 % of its CPU) and
 * recompiled the scorer (17 %), and each cached runtime held its own copy
 * (issue 27). A part is one compiled scorer and its parsed glossary, keyed
 * by exactly what the scorer is built from: the scoring options (the
 * service options — name, metadata, systems… — left out, keys sorted),
 * the custom stopwords and the glossary text (by its SHA-256, am_part_key).
 * Every runtime built from the
 * same key borrows the same part (refcounted); the part's bytes are
 * counted once in the session-memory budget, while it lives, and a
 * runtime counts only its own small state. A scorer is read-only once
 * built (every scoring call takes a const scorer and its own workspace),
 * so runtimes of different sessions use it from any thread.
 *
 * A runtime with a background vocabulary does not share: the scorer
 * borrows the vocabulary, which belongs to the runtime.
 *
 * The parts are in a chained hash table under the cache lock, as are
 * their references: a runtime gives its reference back where its own
 * bytes are uncounted (am_sess_part_drop), so the budget sees a part's
 * bytes go when its last runtime is dropped, as it sees a runtime's own
 * (the frees happen later, outside the lock).
 */
#include "sess_internal.h"

#include "glossary.h"
#include "sha256.h"

#include <assert.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct am_sess_part {
    am_sess_part *next; /* bucket chain */
    uint64_t hash;
    char *key; /* owned, key_len bytes (am_part_key) */
    size_t key_len;
    am_scorer *scorer; /* owned */
    am_gloss gloss; /* owned: the glossary compiled into scorer */
    size_t bytes; /* counted in the cache's budget while counted is set */
    int counted; /* under the cache lock (am_sess_part_count) */
    int refs; /* runtimes borrowing it; under the cache lock */
};

/* The scoring options of an options JSON text, canonical (service options
 * removed, keys sorted, compact), or NULL when the runtime does not share:
 * the text is not a JSON object (its own build refuses it with its
 * message) or names a background vocabulary. Caller frees. */
static char *am_part_options(const char *options_json)
{
    json_t *o = json_loads(options_json, 0, NULL);
    if (!json_is_object(o) || json_object_get(o, "background_vocabulary")) {
        json_decref(o);
        return NULL;
    }
    static const char *const service[] = {
        "baseline_system", "background_vocabulary", "name", "metadata", "systems", "paired_totals"};
    for (size_t i = 0; i < sizeof service / sizeof *service; i++)
        json_object_del(o, service[i]);
    char *t = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(o);
    return t;
}

/* The key of a part: the canonical options, then a presence byte and the
 * text of the stopwords, then a presence byte and the SHA-256 of the
 * glossary text (hex), each NUL-terminated, so that no two different
 * inputs (a NULL and an empty text among them) give the same bytes. The
 * glossary is named by its digest, not kept: its text was 5 KB a part
 * for a 110-entry glossary, kept alongside its compiled form for a
 * compare only (issue 27: 10,000 sessions on glossaries of their own did
 * not fit the budget); two texts with one SHA-256 are not known to
 * exist, and the backups already trust it (dbfile.c). NULL when the
 * options are not a JSON object. Caller frees; *len its length. */
static char *am_part_key(const char *options_json, const char *sw, const char *glossary,
                         size_t *len)
{
    char *opts = am_part_options(options_json);
    if (!opts)
        return NULL;
    char dig[65] = "";
    if (glossary) {
        am_sha256 h;
        am_sha256_init(&h);
        am_sha256_update(&h, glossary, strlen(glossary));
        am_sha256_hex(&h, dig);
    }
    size_t lo = strlen(opts) + 1, ls = sw ? strlen(sw) + 1 : 0, lg = glossary ? sizeof dig : 0;
    *len = lo + 2 + ls + lg;
    char *k = am_xcalloc(*len, 1);
    memcpy(k, opts, lo);
    k[lo] = sw ? 1 : 0;
    if (sw)
        memcpy(k + lo + 1, sw, ls);
    k[lo + 1 + ls] = glossary ? 1 : 0;
    if (glossary)
        memcpy(k + lo + 2 + ls, dig, lg);
    free(opts);
    return k;
}

static uint64_t am_part_hash(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over every byte, NULs included */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)k[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* The part of key (k, n, hash h) with a reference taken, or NULL. Under
 * the cache lock. */
static am_sess_part *am_part_find(am_sessions *c, const char *k, size_t n, uint64_t h)
{
    for (am_sess_part *p = c->parts[h & (AM_SESS_PART_BUCKETS - 1)]; p; p = p->next)
        if (p->hash == h && p->key_len == n && !memcmp(p->key, k, n)) {
            p->refs++;
            return p;
        }
    return NULL;
}

void am_sess_part_free(am_sess_part *p)
{
    if (!p)
        return;
    assert(p->refs == 0); /* given back by every runtime (am_sess_part_drop) */
    am_scorer_free(p->scorer);
    am_gloss_cleanup(&p->gloss);
    free(p->key);
    free(p);
}

/* Gives back one reference to p, under the cache lock. The last one
 * removes p from the table and uncounts its bytes; returns whether it
 * was the last (the caller then frees p, outside the lock). */
static int am_part_put(am_sessions *c, am_sess_part *p)
{
    assert(p->refs > 0);
    if (--p->refs > 0)
        return 0;
    am_sess_part **b = &c->parts[p->hash & (AM_SESS_PART_BUCKETS - 1)];
    while (*b != p)
        b = &(*b)->next;
    *b = p->next;
    if (p->counted)
        mem_count(c, p->bytes, -1);
    return 1;
}

/* ---- compact glossaries ----
 *
 * Parts live as long as a runtime borrows them. With thousands of sessions
 * on glossaries of their own, more than the budget holds compiled, the
 * runtimes posting in turn are evicted and rebuilt, and each rebuild used to
 * parse the stored glossary JSON again (jansson and the entries' checks: as
 * long as compiling the scorer, issue 27). A part's glossary is packed into
 * one relocatable block (am_gloss_pack); when the budget evicts the last
 * runtime of a part, that block is kept as a form of the session's stored
 * glossary version (a fraction of the compiled scorer's bytes), and the
 * session's next build takes it back and compiles from it, parsing nothing.
 * A form exists only while its session has no runtime, so no glossary is
 * held twice. Keyed by (session id, incarnation, glossary version), which
 * names one stored glossary text exactly (a new PUT is a new version, a
 * re-created session a new incarnation), so no text is kept or compared.
 * Counted in the session-memory budget, at most a quarter of it (least
 * recently evicted first out: a form is about a fifth of its compiled part,
 * so a quarter holds about as many sessions as the whole budget compiled),
 * and freed before a runtime in use would have to wait (mem_fit_for). */
struct am_sess_form {
    am_sess_form *next; /* bucket chain */
    am_sess_form *newer, *older; /* the LRU list */
    char *id; /* owned */
    int64_t incarnation, version;
    am_gloss gloss; /* owned, packed */
    size_t bytes;
};

/* Bytes a form counts: its struct, id and block, with malloc's overhead. */
static size_t form_bytes(const am_sess_form *f)
{
    return sizeof *f + strlen(f->id) + 1 + f->gloss.block_bytes + 3 * 16;
}

static size_t form_bucket(const char *id)
{
    return (size_t)am_fnv1a(id) & (AM_SESS_PART_BUCKETS - 1);
}

static void form_unlink_lru(am_sessions *c, am_sess_form *f)
{
    if (f->newer)
        f->newer->older = f->older;
    else
        c->form_mru = f->older;
    if (f->older)
        f->older->newer = f->newer;
    else
        c->form_lru = f->newer;
    f->newer = f->older = NULL;
}

static void form_push_mru(am_sessions *c, am_sess_form *f)
{
    f->older = c->form_mru;
    f->newer = NULL;
    if (c->form_mru)
        c->form_mru->newer = f;
    c->form_mru = f;
    if (!c->form_lru)
        c->form_lru = f;
}

/* Removes f from the table and the list, uncounts and frees it. Under the
 * cache lock (a form is a few KiB: freed in place). */
static void form_remove(am_sessions *c, am_sess_form *f)
{
    am_sess_form **b = &c->forms[form_bucket(f->id)];
    while (*b != f)
        b = &(*b)->next;
    *b = f->next;
    form_unlink_lru(c, f);
    c->form_bytes -= f->bytes;
    c->n_forms--;
    mem_count(c, f->bytes, -1);
    if (f->gloss.block_bytes >= AM_SESS_TRIM_LARGE) /* not taken back (form_take) */
        c->untrimmed += f->gloss.block_bytes; /* handed back by the next mem_reap */
    am_gloss_cleanup(&f->gloss);
    free(f->id);
    free(f);
}

static am_sess_form *form_find(am_sessions *c, const am_sess_form_key *k)
{
    for (am_sess_form *f = c->forms[form_bucket(k->id)]; f; f = f->next)
        if (f->incarnation == k->incarnation && f->version == k->version && !strcmp(f->id, k->id))
            return f;
    return NULL;
}

/* Moves the form of k, if there is one, into *out (left empty otherwise):
 * the glossary is the runtime's again, so the form goes. Returns whether
 * there was one. */
static int form_take(am_sessions *c, const am_sess_form_key *k, am_gloss *out)
{
    am_gloss_init(out);
    pthread_mutex_lock(&c->mu);
    am_sess_form *f = form_find(c, k);
    if (f) {
        *out = f->gloss;
        am_gloss_init(&f->gloss);
        form_remove(c, f);
        c->form_builds++;
    }
    pthread_mutex_unlock(&c->mu);
    return f != NULL;
}

void am_sess_part_to_form(am_sessions *c, am_sess *s)
{
    am_sess_part *p = s->part;
    if (!p || p->refs > 0 || !p->gloss.block)
        return; /* none, shared still, or no glossary */
    am_sess_form_key k = {s->id, s->incarnation, s->glossary_version};
    if (form_find(c, &k))
        return;
    am_sess_form *f = am_xcalloc(1, sizeof *f);
    f->id = am_xstrdup(s->id);
    f->incarnation = s->incarnation;
    f->version = s->glossary_version;
    f->gloss = p->gloss; /* moved: the part is freed without it */
    am_gloss_init(&p->gloss);
    am_gloss_init(&s->gloss);
    f->bytes = form_bytes(f);
    size_t cap = c->mem_max / 4;
    while (c->form_bytes + f->bytes > cap && c->form_lru)
        form_remove(c, c->form_lru);
    am_sess_form **b = &c->forms[form_bucket(f->id)];
    f->next = *b;
    *b = f;
    form_push_mru(c, f);
    c->form_bytes += f->bytes;
    c->n_forms++;
    mem_count(c, f->bytes, 1);
    if (f->bytes > cap)
        form_remove(c, f); /* larger than a quarter of the budget alone */
}

void am_sess_form_forget(am_sessions *c, const char *id)
{
    am_sess_form *f = c->forms[form_bucket(id)];
    while (f) {
        am_sess_form *next = f->next;
        if (!strcmp(f->id, id))
            form_remove(c, f);
        f = next;
    }
}

int am_sess_form_evict(am_sessions *c)
{
    if (!c->form_lru)
        return 0;
    form_remove(c, c->form_lru);
    return 1;
}

void am_sess_forms_free(am_sessions *c)
{
    while (am_sess_form_evict(c))
        ;
}

size_t am_sessions_forms(am_sessions *c, size_t *bytes)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->n_forms;
    if (bytes)
        *bytes = c->form_bytes;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* Compiles the part p (key set) from its inputs: the glossary taken from
 * the form of fk when there is one, else parsed from the stored JSON.
 * p->gloss ends packed. */
static int part_compile(am_sessions *c, am_sess_part *p, const char *options_json, const char *sw,
                        const char *glossary, const am_sess_form_key *fk, am_buf *err)
{
    if (glossary && fk && form_take(c, fk, &p->gloss))
        return am_sessions_build_gloss(c, options_json, sw, &p->gloss, &p->scorer, err);
    int rc = am_sessions_build_in(c, options_json, sw, glossary, NULL, &p->scorer, &p->gloss, err);
    /* kept as long as a runtime borrows it, and then as a form: its
     * entries in one block */
    if (rc == AM_OK)
        am_gloss_pack(&p->gloss);
    return rc;
}

int am_sess_part_get(am_sessions *c, const char *options_json, const char *sw, const char *glossary,
                     const am_sess_form_key *fk, int build, am_sess_part **out, am_buf *err)
{
    *out = NULL;
    size_t n = 0;
    char *k = am_part_key(options_json, sw, glossary, &n);
    if (!k)
        return AM_OK; /* not shared: the runtime's own build refuses it */
    uint64_t h = am_part_hash(k, n);
    pthread_mutex_lock(&c->mu);
    am_sess_part *p = am_part_find(c, k, n, h);
    pthread_mutex_unlock(&c->mu);
    if (p || !build) {
        free(k);
        *out = p;
        return AM_OK;
    }
    /* Compiled outside the lock (a large glossary takes a while); two
     * threads may compile the same key at once: the second keeps the
     * first's part and frees its own. */
    p = am_xcalloc(1, sizeof *p);
    am_gloss_init(&p->gloss);
    p->key = k;
    p->key_len = n;
    p->hash = h;
    int rc = part_compile(c, p, options_json, sw, glossary, fk, err);
    if (rc != AM_OK) {
        am_sess_part_free(p);
        return rc;
    }
    p->refs = 1;
    p->bytes = am_sessions_scorer_bytes(p->scorer, &p->gloss) + n + sizeof *p;
    pthread_mutex_lock(&c->mu);
    am_sess_part *q = am_part_find(c, k, n, h);
    if (!q) {
        am_sess_part **b = &c->parts[h & (AM_SESS_PART_BUCKETS - 1)];
        p->next = *b;
        *b = p; /* counted by the runtime's acquire, after its reservation */
    }
    pthread_mutex_unlock(&c->mu);
    if (q) {
        p->refs = 0;
        am_sess_part_free(p);
        p = q;
    }
    *out = p;
    return AM_OK;
}

am_scorer *am_sess_part_scorer(am_sess_part *p)
{
    return p->scorer;
}

const am_gloss *am_sess_part_gloss(const am_sess_part *p)
{
    return &p->gloss;
}

void am_sess_part_unref(am_sessions *c, am_sess_part *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&c->mu);
    int last = am_part_put(c, p);
    pthread_mutex_unlock(&c->mu);
    if (last)
        am_sess_part_free(p);
}

void am_sess_part_drop(am_sessions *c, am_sess *s)
{
    if (!s->part || s->part->refs == 0)
        return; /* none, or already given back (s owns it now) */
    if (am_part_put(c, s->part))
        return; /* the last: freed with s (am_sess_free) */
    /* others still use it: s no longer borrows anything */
    s->part = NULL;
    s->scorer = NULL;
    am_gloss_init(&s->gloss);
}

size_t am_sess_part_count(const am_sess *s)
{
    if (!s->part || s->part->counted)
        return 0;
    s->part->counted = 1;
    return s->part->bytes;
}

size_t am_sess_part_owned(const am_sess *s)
{
    return s->part && s->part->refs == 0 ? s->part->bytes : 0;
}

size_t am_sessions_parts(am_sessions *c)
{
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < AM_SESS_PART_BUCKETS; i++)
        for (const am_sess_part *p = c->parts[i]; p; p = p->next)
            n++;
    pthread_mutex_unlock(&c->mu);
    return n;
}

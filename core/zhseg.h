/*
 * zhseg.h — Chinese word segmentation for recall's content words, with
 * friso (Debian libfriso0 1.6.4, the MMSEG algorithm over its own
 * dictionary, package friso-dict).
 *
 * This is not a sacreBLEU tokenizer: BLEU keeps sacreBLEU's "zh" rule
 * exactly. It serves recall (R0/R1) and the vocabulary counts that follow
 * recall's tokenizer, where a Chinese "word" of one character per token
 * is far from what a translator learns (docs/metrics.md §1 has the
 * measurement that chose it).
 *
 * Two objects, as for MeCab (mecab.h), because loading friso's dictionary
 * is expensive (its text lexicons are parsed into a hash table: about
 * half a second and 24 MB) while segmenting is cheap:
 *   am_zhseg     the model: the dictionary, loaded once by its owner (the
 *                CLI command, or the server for the whole process); safe to
 *                share between threads (friso writes offsets into its
 *                dictionary entries while segmenting, so segmenting is
 *                serialized per model: zhseg.c);
 *   am_zhseg_ws  a friso task and its own copy of the segmentation
 *                settings over a model: one per thread (or workspace).
 * There is no global state: without a model nothing segments, and a
 * caller that asks for zh-friso without one gets AM_ERR_INVALID.
 *
 * friso rewrites the words it returns (Latin letters lower-cased, full
 * width folded to half width, words cut at 63 bytes); the tokens given
 * here are the caller's own text, cut where friso's offsets say, so that
 * case folding and normalization stay recall's business. Text friso
 * skips (punctuation, symbols) is kept as tokens split at whitespace, so
 * no character of the input is lost.
 *
 * The settings are fixed here, not read from /etc/friso/friso.ini, so the
 * result does not depend on the machine's configuration: complex (MMSEG)
 * mode, words up to 5 characters, Chinese name recognition on, no
 * synonyms, no secondary split of Latin words, unknown words kept. The
 * signature is "zh-friso-" + friso's version, e.g. "zh-friso-1.6.4".
 */
#ifndef AM_ZHSEG_H
#define AM_ZHSEG_H

#include "am.h"

/* Debian's friso-dict UTF-8 lexicon directory: the default dictionary. */
#define AM_ZHSEG_DICT_DIR "/usr/share/friso/dict/UTF-8"

typedef struct am_zhseg am_zhseg;
typedef struct am_zhseg_ws am_zhseg_ws;

/* Loads the friso lexicons listed in dicdir/friso.lex.ini (dicdir NULL:
 * AM_ZHSEG_DICT_DIR) into a new model *out; caller frees with
 * am_zhseg_free. Returns AM_OK; AM_ERR_NOTFOUND when the lexicon index is
 * missing or unreadable, or loads no word (err names the directory and
 * the package to install); AM_ERR_INVALID when out is NULL or dicdir is
 * longer than friso accepts. err (may be NULL) receives the message,
 * reset first. */
int am_zhseg_new(const char *dicdir, am_zhseg **out, am_buf *err);
/* Frees a model (NULL is a no-op). Every am_zhseg_ws over it must be freed
 * first. */
void am_zhseg_free(am_zhseg *m);
/* The tokenizer signature, "zh-friso-1.6.4" (static). */
const char *am_zhseg_signature(const am_zhseg *m);
/* Number of words in the loaded lexicons. */
unsigned am_zhseg_dict_size(const am_zhseg *m);

/* Creates a workspace over model m (borrowed: it must outlive the
 * workspace) into *out; caller frees with am_zhseg_ws_free. Returns AM_OK
 * or AM_ERR_INVALID for NULL arguments. */
int am_zhseg_ws_new(const am_zhseg *m, am_zhseg_ws **out);
/* Frees a workspace (NULL is a no-op). */
void am_zhseg_ws_free(am_zhseg_ws *ws);
/* The model a workspace was created over (borrowed). */
const am_zhseg *am_zhseg_ws_model(const am_zhseg_ws *ws);

/* Segments the valid UTF-8, NUL-terminated string s (borrowed) and writes
 * its tokens, each a substring of s, separated by single spaces, into out
 * (reset first). Returns AM_OK or AM_ERR_INVALID for NULL arguments. */
int am_zhseg_tokenize(am_zhseg_ws *ws, const char *s, am_buf *out);

#endif

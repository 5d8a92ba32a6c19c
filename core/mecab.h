/*
 * mecab.h — Japanese word segmentation with MeCab and the IPA dictionary,
 * exactly as sacreBLEU 2.6.0's "ja-mecab" tokenizer
 * (sacrebleu/tokenizers/tokenizer_ja_mecab.py) produces it.
 *
 * sacreBLEU builds MeCab.Tagger("<ipadic args> -Owakati") and tokenizes a
 * line as tagger.parse(line.strip()).strip(): the surface form of every
 * morpheme, each followed by one space, the whole stripped. This module
 * runs the same MeCab library (Debian libmecab2 0.996) in the same output
 * mode, so the token boundaries are MeCab's own, not a re-implementation.
 *
 * Two objects, because a MeCab model (the dictionary, mapped read-only) is
 * safe to share between threads while a tagger and its lattice are not:
 *   am_mecab     the model: created once by its owner (the CLI command or
 *                the server at start-up), shared read-only by every thread,
 *                freed last;
 *   am_mecab_ws  a tagger and a lattice over a model: one per thread (or
 *                per workspace); cheap to create, reused across calls.
 * There is no global state: without a model nothing can tokenize, and a
 * caller that asks for ja-mecab without one gets AM_ERR_INVALID.
 *
 * Loading the dictionary (am_mecab_new) is the one place in core/ that
 * reads files, and it does so only through MeCab when the owner asks for
 * it; tokenizing does no I/O.
 *
 * The dictionary must be IPAdic in UTF-8: sacreBLEU asserts 392126 entries
 * (the PyPI "ipadic" 1.0.0 build); Debian's mecab-ipadic-utf8 has 392127
 * (Debian added 令和, the Reiwa era name). Both are accepted — they segment
 * identically except around 令和 (docs/metrics.md) — and anything else
 * (UniDic, a user dictionary, another charset) is refused with a message,
 * as sacreBLEU refuses it. The signature is sacreBLEU's:
 * "ja-mecab-" + MeCab's version + "-IPA", e.g. "ja-mecab-0.996-IPA".
 */
#ifndef AM_MECAB_H
#define AM_MECAB_H

#include "am.h"

/* Debian's mecab-ipadic-utf8 install directory: the default dictionary. */
#define AM_MECAB_IPADIC_DIR "/var/lib/mecab/dic/ipadic-utf8"
/* Entry counts of the accepted IPA dictionaries (see above). */
#define AM_MECAB_IPADIC_SIZE 392126u
#define AM_MECAB_IPADIC_DEBIAN_SIZE 392127u

typedef struct am_mecab am_mecab;
typedef struct am_mecab_ws am_mecab_ws;

/* Loads the IPA dictionary in directory dicdir (NULL: AM_MECAB_IPADIC_DIR)
 * into a new model *out; caller frees with am_mecab_free. Settings files
 * (mecabrc, a user dictionary) are not read, so the result does not depend
 * on the machine's MeCab configuration. Returns AM_OK; AM_ERR_NOTFOUND when
 * the dictionary cannot be loaded (missing or unreadable: err says which
 * directory and what to install); AM_ERR_INVALID when out is NULL or the
 * dictionary is not a UTF-8 IPA dictionary (err says what was found). err
 * (may be NULL) receives the message, reset first. */
int am_mecab_new(const char *dicdir, am_mecab **out, am_buf *err);
/* Frees a model (NULL is a no-op). Every am_mecab_ws over it must be freed
 * first. */
void am_mecab_free(am_mecab *m);
/* sacreBLEU's tokenizer signature, e.g. "ja-mecab-0.996-IPA" (owned by m). */
const char *am_mecab_signature(const am_mecab *m);
/* Number of entries of the loaded system dictionary (392126 or 392127). */
unsigned am_mecab_dict_size(const am_mecab *m);

/* Creates a tagger workspace over model m (borrowed: it must outlive the
 * workspace) into *out; caller frees with am_mecab_ws_free. Returns AM_OK,
 * AM_ERR_INVALID for NULL arguments, AM_ERR_INTERNAL if MeCab fails. */
int am_mecab_ws_new(const am_mecab *m, am_mecab_ws **out);
/* Frees a workspace (NULL is a no-op). */
void am_mecab_ws_free(am_mecab_ws *ws);
/* The model a workspace was created over (borrowed). */
const am_mecab *am_mecab_ws_model(const am_mecab_ws *ws);

/* Tokenizes the valid UTF-8, NUL-terminated string s (borrowed) as
 * sacreBLEU's ja-mecab does: Python str.strip(), MeCab -Owakati, strip.
 * Writes the space-separated surface forms into out (reset first). Returns
 * AM_OK, AM_ERR_INVALID for NULL arguments, AM_ERR_INTERNAL if MeCab
 * fails (out is then empty). */
int am_mecab_tokenize(am_mecab_ws *ws, const char *s, am_buf *out);

#endif

#!/usr/bin/env python3
"""Builds cases.json and wmt17_en_de_systems.json.bz2 from sacreBLEU 2.6.0's
test/ directory (Apache-2.0; see NOTICE.md): the expected values of every
pytest case, as data. Nothing of sacreBLEU is imported or run; the module-
level literals of each test file are read with the ast module.

usage: make_cases.py SACREBLEU_TEST_DIR OUT_DIR
(SACREBLEU_TEST_DIR: `git show v2.6.0:test/<file>` of github:mjpost/sacrebleu)
"""
import ast
import bz2
import collections
import json
import os
import pickle
import sys

Statistics = collections.namedtuple('Statistics', ['common', 'total'])


def literals(path):
    """Module-level NAME = literal assignments of a test file."""
    env = {}
    tree = ast.parse(open(path, encoding='utf-8').read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            try:
                env[name] = eval(compile(ast.Expression(node.value), path, 'eval'),
                                 {'Statistics': Statistics, '__builtins__': {}}, dict(env))
            except Exception:
                pass  # not a literal (e.g. a computation): not needed
    return env


cases = []


# The target language of each file's texts (adaptmon score is told it so that
# no case depends on a missing-language default; BLEU, chrF and TER of `score`
# do not depend on it for these languages). The tokenizer tests hold Chinese
# and Japanese: TER's tokenizer options, not the language, split them.
LANG = {'test_bleu.py': 'en', 'test_chrf.py': 'de', 'test_sentence_bleu.py': 'ro',
        'test_significance.py': 'de', 'test_ter.py': 'de', 'test_tokenizer_ter.py': 'en'}


def add(file, test, index, metric, level, runs, skip=None, note=None):
    c = {'id': f'{file}::{test}[{index}]', 'file': file, 'test': test, 'index': index,
         'metric': metric, 'level': level, 'runs': runs}
    if file in LANG:
        c['target_lang'] = 'cs' if test == 'test_chrf_sentence_level' else LANG[file]
    if skip:
        c['skip'] = skip
    if note:
        c['note'] = note
    cases.append(c)


def run(hyps, refs, options, expected, compare, scale=1.0):
    """refs: a list of reference streams (each parallel to hyps)."""
    return {'hyps': list(hyps), 'refs': [list(r) for r in refs], 'options': options,
            'expected': expected, 'compare': compare, 'scale': scale}


def main():
    src, out = sys.argv[1], sys.argv[2]
    P = lambda f: os.path.join(src, f)

    # ---- test_api.py, test_dataset.py: the test-set download API ----------
    api = literals(P('test_api.py'))
    for t in ('test_api_get_source', 'test_api_get_reference'):
        for i, _ in enumerate(api['test_api_get_data']):
            add('test_api.py', t, i, 'dataset', None, [],
                skip='sacreBLEU test-set download API (WMT data files); adaptmon has no '
                     'test-set downloader')
    for t in ('test_api_get_available_testsets', 'test_api_get_available_testsets_for_langpair',
              'test_api_get_langpairs_for_testset'):
        add('test_api.py', t, 0, 'dataset', None, [],
            skip='sacreBLEU test-set registry API; adaptmon has no test-set registry')
    for t in ('test_maybe_download', 'test_process_to_text', 'test_get_files_and_fieldnames',
              'test_source_and_references', 'test_wmt22_references'):
        add('test_dataset.py', t, 0, 'dataset', None, [],
            skip='sacreBLEU test-set download and processing; adaptmon has no test-set '
                 'downloader')

    # ---- test_bleu.py (EPSILON 1e-8) -----------------------------------------
    b = literals(P('test_bleu.py'))
    eps = {'kind': 'abs', 'tol': 1e-8}
    raw = lambda sv: {'smooth_method': 'floor', 'smooth_value': sv, 'tokenize': 'none',
                      'effective_order': True}
    for i, (h, r, e) in enumerate(b['test_raw_bleu_cases']):
        add('test_bleu.py', 'test_raw_bleu', i, 'bleu', 'corpus',
            [run(h, r, raw(0.01), e, eps, scale=0.01)])
    for i, (h, r, kw, e) in enumerate(b['test_corpus_bleu_cases']):
        add('test_bleu.py', 'test_corpus_bleu', i, 'bleu', 'corpus',
            [run(h, r, dict(kw), e, eps)])
    for i, (h, r, e) in enumerate(b['test_case_effective_order']):
        add('test_bleu.py', 'test_effective_order', i, 'bleu', 'corpus',
            [run(h, r, raw(0.01), e, eps, scale=0.01)])
    for i, (h, r, st) in enumerate(b['test_case_statistics']):
        add('test_bleu.py', 'test_statistics', i, 'bleu', 'corpus',
            [run(h, r, raw(0.01), {'counts': list(st.common), 'totals': list(st.total)},
                 {'kind': 'bleu_stats'})])
    for i, _ in enumerate(b['test_case_scoring']):
        add('test_bleu.py', 'test_scoring', i, 'bleu', None, [],
            skip='BLEU.compute_bleu on given statistics (no texts): an internal function, '
                 'covered by tests/unit/test_bleu.c')
    for i, (h, r, with_off, without_off) in enumerate(b['test_case_offset']):
        add('test_bleu.py', 'test_offset', i, 'bleu', 'corpus',
            [run(h, r, raw(0.0), without_off, eps, scale=0.01),
             run(h, r, raw(None), with_off, eps, scale=0.01)],
            note='raw_corpus_bleu with smooth_value None and with the default are the same '
                 'run (floor 0.1)')
    for i, _ in enumerate(b['test_case_degenerate_stats']):
        add('test_bleu.py', 'test_degenerate_statistics', i, 'bleu', None, [],
            skip='BLEU.compute_bleu on given statistics (no texts): an internal function, '
                 'covered by tests/unit/test_bleu.c')
    for i, (order, h, r, e) in enumerate(b['test_bleu_max_order']):
        add('test_bleu.py', 'test_max_ngram_order', i, 'bleu', 'corpus',
            [run(h, r, {'max_ngram_order': order}, e, {'kind': 'format', 'fmt': '{:.2f}'})],
            skip=None if order <= 4 else
            'BLEU n-gram order above 4: adaptmon keeps BLEU statistics for orders 1..4 '
            '(bleu_max_ngram_order 1..4)')

    # ---- test_chrf.py (EPSILON 1e-4) -----------------------------------------
    c = literals(P('test_chrf.py'))
    eps = {'kind': 'abs', 'tol': 1e-4}
    for i, (h, r, e) in enumerate(c['test_cases']):
        add('test_chrf.py', 'test_chrf', i, 'chrf', 'corpus',
            [run(h, [r], {'char_order': 6, 'word_order': 0, 'beta': 3, 'eps_smoothing': True},
                 e, eps)])
    for i, (h, r, e) in enumerate(c['test_cases_effective_order']):
        add('test_chrf.py', 'test_chrf_eff_order', i, 'chrf', 'corpus',
            [run(h, [r], {'char_order': 6, 'word_order': 0, 'beta': 3, 'eps_smoothing': False},
                 e, eps)])
    for i, (h, r, e) in enumerate(c['test_cases_keep_whitespace']):
        add('test_chrf.py', 'test_chrf_keep_whitespace', i, 'chrf', 'corpus',
            [run(h, [r], {'char_order': 6, 'word_order': 0, 'beta': 3, 'whitespace': True},
                 e, eps)])
    for i, (h, r, e) in enumerate(c['test_sentence_level_chrf']):
        add('test_chrf.py', 'test_chrf_sentence_level', i, 'chrf', 'sentence',
            [run([h], [[x] for x in r], {'eps_smoothing': True}, e, eps)])

    # ---- test_sentence_bleu.py (EPSILON 1e-3) ---------------------------------
    s = literals(P('test_sentence_bleu.py'))
    eps = {'kind': 'abs', 'tol': 1e-3}
    for t in ('test_compat_sentence_bleu', 'test_api_sentence_bleu'):
        for i, (sm, sv, lc, tok, e) in enumerate(s['test_cases']):
            o = {'smooth_method': sm, 'smooth_value': sv, 'lowercase': lc, 'tokenize': tok,
                 'effective_order': True}
            add('test_sentence_bleu.py', t, i, 'bleu', 'sentence',
                [run([s['SYS']], [[s['REF']]], o, e, eps)])
    for i, (sm, sv, lc, tok, e) in enumerate(s['test_cases_zero_bleu']):
        o = {'smooth_method': sm, 'smooth_value': sv, 'lowercase': lc, 'tokenize': tok,
             'effective_order': True}
        add('test_sentence_bleu.py', 'test_api_sentence_bleu_zero', i, 'bleu', 'sentence',
            [run([s['SYS_0']], [[s['REF_0']]], o, e, eps)])

    # ---- test_significance.py (1e-2) ------------------------------------------
    g = literals(P('test_significance.py'))
    with bz2.BZ2File(P('wmt17_en_de_systems.pkl.bz2'), 'rb') as f:
        data = pickle.load(f)
    _, refs = data.pop()
    systems = [{'name': n, 'lines': h} for n, h in data]
    for x in [refs[0]] + [y['lines'] for y in systems]:
        assert all('\n' not in l and '\r' not in l for l in x)
    with bz2.open(os.path.join(out, 'wmt17_en_de_systems.json.bz2'), 'wt',
                  encoding='utf-8') as f:
        json.dump({'about': 'sacreBLEU 2.6.0 test/wmt17_en_de_systems.pkl.bz2 as JSON: WMT17 '
                            'en-de newstest2017 outputs of 16 systems (the first is the '
                            'baseline of the paired tests) and the reference',
                   'systems': systems, 'references': refs}, f, ensure_ascii=False)
    for i, (name, p) in enumerate(g['MOSES_P_VALS'].items()):
        add('test_significance.py', 'test_paired_bootstrap', i, 'significance', 'corpus',
            [{'data': 'wmt17_en_de_systems.json.bz2', 'system': name,
              'options': {'tokenize': 'none', 'test': 'bs', 'n': 2000, 'seed': 12345},
              'expected': p, 'compare': {'kind': 'abs', 'tol': 1e-2}}])
    for i, (name, p) in enumerate(g['MULTEVAL_P_VALS'].items()):
        add('test_significance.py', 'test_paired_approximate_randomization', i, 'significance',
            'corpus',
            [{'data': 'wmt17_en_de_systems.json.bz2', 'system': name,
              'options': {'tokenize': 'none', 'test': 'ar', 'n': 10000, 'seed': 12345},
              'expected': p[0], 'compare': {'kind': 'abs', 'tol': 1e-2}}])

    # ---- test_ter.py (EPSILON 1e-3, score = 100 * expected) -------------------
    t = literals(P('test_ter.py'))
    for i, (h, r, e) in enumerate(t['test_cases']):
        add('test_ter.py', 'test_ter', i, 'ter', 'corpus',
            [run(h, [r], {}, e, {'kind': 'abs', 'tol': 1e-3}, scale=0.01)])

    # ---- test_tokenizer_ter.py (exact strings) --------------------------------
    k = literals(P('test_tokenizer_ter.py'))
    groups = [('test_ter_tokenizer_default', 'test_cases_default', {}),
              ('test_ter_tokenizer_nopunct', 'test_cases_no_punct', {'no_punct': True}),
              ('test_ter_tokenizer_norm', 'test_cases_norm', {'normalized': True}),
              ('test_ter_tokenizer_asian', 'test_cases_asian',
               {'normalized': True, 'asian_support': True})]
    for test, var, o in groups:
        for i, (inp, exp) in enumerate(k[var]):
            add('test_tokenizer_ter.py', test, i, 'ter_tokenizer', 'sentence',
                [{'hyps': [inp], 'refs': [[exp]], 'options': dict(o),
                  'expected': {'ter': 0.0, 'ref_len': len(exp.split())},
                  'compare': {'kind': 'ter_tokens'}}],
                note='tokenizer output is not printed by adaptmon score: expressed as TER 0 '
                     'between the input and the expected tokenization under the same options, '
                     'and the expected token count as the reference length; the exact strings '
                     'are checked in tests/unit/test_ter.c test_tokenizer_options')

    json.dump({'about': "Every pytest case of sacreBLEU 2.6.0's test/ directory as data: "
                        'inputs, options (sacreBLEU API names), expected values and the '
                        "test's tolerance. Made by make_cases.py; licence: NOTICE.md.",
               'sacrebleu_version': '2.6.0', 'cases': cases},
              open(os.path.join(out, 'cases.json'), 'w', encoding='utf-8'),
              ensure_ascii=False, indent=1)
    print(len(cases), 'cases,', sum(1 for x in cases if x.get('skip')), 'skipped')


if __name__ == '__main__':
    main()

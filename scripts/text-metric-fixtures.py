#!/usr/bin/env python3
"""Expected chrF, chrF++ and TER values for todeval's tests, computed by sacreBLEU itself.

    /usr/bin/python3 scripts/text-metric-fixtures.py --sacrebleu /path/to/sacrebleu [--out test/fixtures/significance]

Needs what scripts/significance-fixtures.py needs (NumPy and a sacreBLEU source checkout with its
dependencies; Debian: python3-numpy python3-regex python3-tabulate python3-portalocker
python3-colorama python3-lxml) and reuses its synthetic corpus, so both fixtures score the same
text. Nothing of sacreBLEU is copied: the fixtures hold our synthetic corpus and sacreBLEU's numbers.

Writes:
  chrf-ter-synthetic.json  corpus chrF/chrF++/TER for a grid of options x 1-2 references x 5 systems
                           (summed statistics and scores), sentence-level scores, TER tokenizations,
                           and the paired tests / confidence of sacreBLEU's PairedTest for them
  wmt17-chrf-ter.json      chrF, chrF++ and TER (default options) of the 16 WMT17 systems that
                           sacreBLEU's test suite ships (only the numbers)
"""
import argparse
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('significance_fixtures', os.path.join(HERE, 'significance-fixtures.py'))
sf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sf)

# (our option names, sacreBLEU's keyword arguments)
CHRF_CONFIGS = [
    ({}, {}),
    ({'wordOrder': 2}, {'word_order': 2}),
    ({'lowercase': True}, {'lowercase': True}),
    ({'whitespace': True}, {'whitespace': True}),
    ({'epsSmoothing': True}, {'eps_smoothing': True}),
    ({'charOrder': 4, 'wordOrder': 1, 'beta': 1}, {'char_order': 4, 'word_order': 1, 'beta': 1}),
    ({'wordOrder': 2, 'beta': 3, 'lowercase': True, 'whitespace': True, 'epsSmoothing': True},
     {'word_order': 2, 'beta': 3, 'lowercase': True, 'whitespace': True, 'eps_smoothing': True}),
]
TER_CONFIGS = [
    ({}, {}),
    ({'caseSensitive': True}, {'case_sensitive': True}),
    ({'normalized': True}, {'normalized': True}),
    ({'noPunct': True}, {'no_punct': True}),
    ({'normalized': True, 'asianSupport': True}, {'normalized': True, 'asian_support': True}),
    ({'noPunct': True, 'asianSupport': True}, {'no_punct': True, 'asian_support': True}),
    ({'normalized': True, 'noPunct': True, 'asianSupport': True, 'caseSensitive': True},
     {'normalized': True, 'no_punct': True, 'asian_support': True, 'case_sensitive': True}),
]


def load(checkout):
    sf.load_sacrebleu(checkout)  # writes version.py when absent, puts the checkout on sys.path
    import sacrebleu
    from sacrebleu.metrics import CHRF, TER
    from sacrebleu.significance import PairedTest
    return CHRF, TER, PairedTest, sacrebleu.__version__


def numbers(stats):
    return [float(x) if isinstance(x, float) else int(x) for x in stats]


def corpus_entry(metric, hyps, refs):
    stats = metric._extract_corpus_statistics(hyps, refs)
    total = metric._aggregate_and_compute(stats)
    summed = [sum(col) for col in zip(*stats)]
    return {'score': total.score, 'stats': numbers(summed), 'signature': metric.get_signature().format(), 'name': total.name}


def synthetic(CHRF, TER, PairedTest, version):
    corpus = sf.synthetic_corpus()
    refs = corpus['references']
    names = list(corpus['systems'])
    chrf, ter = [], []
    for ours, kw in CHRF_CONFIGS:
        for nrefs in (1, 2):
            for name in names:
                e = corpus_entry(CHRF(**kw), corpus['systems'][name], refs[:nrefs])
                chrf.append({'options': ours, 'system': name, 'nrefs': nrefs, **e})
    for ours, kw in TER_CONFIGS:
        for nrefs in (1, 2):
            for name in names:
                e = corpus_entry(TER(**kw), corpus['systems'][name], refs[:nrefs])
                ter.append({'options': ours, 'system': name, 'nrefs': nrefs, **e})
    # Sentence level: sys-worse's first 80 segments against both references.
    hyps = corpus['systems']['sys-worse'][:80]
    sentence = {
        'system': 'sys-worse', 'segments': 80,
        'chrf': [{'options': ours, 'scores': [CHRF(**kw).sentence_score(h, [r0, r1]).score for h, r0, r1 in zip(hyps, refs[0], refs[1])]} for ours, kw in CHRF_CONFIGS],
        'ter': [{'options': ours, 'scores': [TER(**kw).sentence_score(h, [r0, r1]).score for h, r0, r1 in zip(hyps, refs[0], refs[1])]} for ours, kw in TER_CONFIGS],
    }
    lines = refs[0][:60] + corpus['systems']['sys-worse'][:60]
    tokenized = [{'options': ours, 'lines': [TER(**kw).tokenizer(line.rstrip()) for line in lines]} for ours, kw in TER_CONFIGS]

    systems = [(n, corpus['systems'][n]) for n in names]

    def paired(test, n, seed, n_ar_confidence=-1):
        os.environ['SACREBLEU_SEED'] = str(seed)
        metrics = {'chrF': CHRF(references=refs), 'chrF++': CHRF(word_order=2, references=refs), 'TER': TER(references=refs)}
        sigs, scores = PairedTest(systems, metrics, references=None, test_type=test, n_samples=n, n_ar_confidence=n_ar_confidence)()
        return {'test': test, 'n': n, 'seed': seed, 'nArConfidence': n_ar_confidence,
                'metrics': {k: {'signature': sigs[k].format(), 'systems': [sf.result_json(name, r) for name, r in zip(scores['System'], scores[k])]}
                            for k in sigs}}

    tests = [paired('bs', 1000, 12345), paired('ar', 2000, 99, n_ar_confidence=300)]

    confidence = []
    for ours, kw, which in [({'wordOrder': 2}, {'word_order': 2}, 'chrf'), ({}, {}, 'ter')]:
        os.environ['SACREBLEU_SEED'] = '12345'
        metric = CHRF(**kw) if which == 'chrf' else TER(**kw)
        s = metric.corpus_score(corpus['systems']['sys-close'], refs, n_bootstrap=1000)
        confidence.append({'metric': which, 'options': ours, 'system': 'sys-close', 'n': 1000, 'seed': 12345,
                           'signature': metric.get_signature().format(), 'score': s.score, 'mean': s._mean, 'ci': s._ci})
    return {'sacrebleu': version, 'chrf': chrf, 'ter': ter, 'sentence': sentence, 'terTokenized': tokenized,
            'tests': tests, 'confidence': confidence}


def wmt17(CHRF, TER, version, checkout):
    named, refs = sf.read_wmt17(checkout)
    out = {'sacrebleu': version, 'systems': [n for n, _ in named], 'scores': []}
    for metric_name, make in [('chrF', lambda: CHRF(references=refs)), ('chrF++', lambda: CHRF(word_order=2, references=refs)), ('TER', lambda: TER(references=refs))]:
        t0 = time.time()
        metric = make()
        for name, hyps in named:
            e = corpus_entry(metric, hyps, None)
            out['scores'].append({'metric': metric_name, 'system': name, **e})
        print(f'wmt17 {metric_name}: {time.time() - t0:.1f} s', file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sacrebleu', required=True, help='sacreBLEU source checkout')
    ap.add_argument('--out', default=os.path.join(HERE, '..', 'test', 'fixtures', 'significance'))
    ap.add_argument('--skip-wmt17', action='store_true', help='leave wmt17-chrf-ter.json as it is (TER takes minutes)')
    args = ap.parse_args()
    checkout = os.path.abspath(args.sacrebleu)
    os.makedirs(args.out, exist_ok=True)
    CHRF, TER, PairedTest, version = load(checkout)
    sf.write(args.out, 'chrf-ter-synthetic.json', synthetic(CHRF, TER, PairedTest, version))
    if not args.skip_wmt17:
        sf.write(args.out, 'wmt17-chrf-ter.json', wmt17(CHRF, TER, version, checkout))


if __name__ == '__main__':
    main()

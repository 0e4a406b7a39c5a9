"""sacreBLEU (a source checkout, argv[1]) as the live peer of the corpus comparisons that
test/fixtures/significance/wmt17*.json hold for sacreBLEU's WMT17 systems: the same numbers, in the
same shapes, for whatever systems the test sends, so a corpus CI has (MultiWOZ responses) is checked
as the WMT17 systems are.

stdin: JSON {"refs": [[line, ...]], "systems": [[name, [line, ...]], ...],
             "bleu": [tokenizer, ...], "chrfTer": [["chrF"|"chrF++"|"TER", [system name, ...]], ...],
             "tests": [{"test": "bs"|"ar", "n": N, "seed": S, "bleu": {BLEU options}}]}
stdout: JSON {"sacrebleu": version,
              "scores": [{"system", "tokenize", "signature", "score", "counts", "totals", "sysLen", "refLen"}],
              "chrfTer": [{"metric": "chrF"|"chrF++"|"TER", "system", "score", "stats", "signature"}],
              "tests": [{"test", "n", "seed", "nArConfidence", "bleu", "signature", "systems": [...]}]}
Only sacreBLEU's public metric classes and PairedTest are called; the statistics are the ones its
corpus_score sums (the per-segment statistics of _extract_corpus_statistics, summed by column).
"""
import gc
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
import sacrebleu  # noqa: E402
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402
from sacrebleu.significance import PairedTest  # noqa: E402


def number(x):
    return float(x) if isinstance(x, float) else int(x)


def remembered(metric):
    """`metric` whose _extract_corpus_statistics(hyps, None) (against its cached references) is
    computed once per system: corpus BLEU and each paired test extract the same statistics of the
    same systems with the same metric, and sacreBLEU's PairedTest extracts them again for every
    test. They are a pure function of the hypotheses and the references; nothing mutates them
    (sums and numpy copies are taken), so the second extraction is the first's result."""
    extract = metric._extract_corpus_statistics
    memo = {}

    def once(hypotheses, references):
        if references is not None:
            return extract(hypotheses, references)
        key = tuple(hypotheses)
        if key not in memo:
            memo[key] = extract(hypotheses, None)
        return memo[key]

    metric._extract_corpus_statistics = once
    return metric


def bleu_metric(refs, options, made, remember=True):
    """BLEU(references=refs, **options), one instance per tokenizer when `options` names nothing
    else (tokenize None is BLEU's default, TOKENIZER_DEFAULT, as its constructor resolves it
    without a target language), so the references are cached and the systems' statistics extracted
    once for corpus BLEU and the paired tests together."""
    if set(options) - {'tokenize'}:
        return BLEU(references=refs, **options)
    tok = options.get('tokenize') or BLEU.TOKENIZER_DEFAULT
    if tok in made:
        return made[tok]
    metric = BLEU(references=refs, tokenize=tok)
    # Kept (its reference cache and the systems' statistics: memory) only when a test will reuse it.
    if remember:
        made[tok] = remembered(metric)
    return metric


def bleu_scores(systems, refs, tokenizers, made, tested):
    out = []
    for tok in tokenizers:
        metric = bleu_metric(refs, {'tokenize': tok}, made, remember=tok in tested)
        for name, hyps in systems:
            s = metric.corpus_score(hyps, None)
            out.append({'system': name, 'tokenize': tok, 'signature': metric.get_signature().format(), 'score': s.score,
                        'counts': [int(c) for c in s.counts], 'totals': [int(t) for t in s.totals],
                        'sysLen': int(s.sys_len), 'refLen': int(s.ref_len)})
    return out


def chrf_ter(systems, refs, wanted):
    out = []
    make = {'chrF': lambda: CHRF(references=refs), 'chrF++': lambda: CHRF(word_order=2, references=refs), 'TER': lambda: TER(references=refs)}
    for metric_name, names in wanted:
        metric = make[metric_name]()
        for name, hyps in systems:
            if name not in names:
                continue
            stats = metric._extract_corpus_statistics(hyps, None)
            total = metric._aggregate_and_compute(stats)
            out.append({'metric': metric_name, 'system': name, 'score': total.score,
                        'stats': [number(sum(col)) for col in zip(*stats)], 'signature': metric.get_signature().format()})
    return out


def paired(systems, refs, test, n, seed, bleu, made):
    os.environ['SACREBLEU_SEED'] = str(seed)
    metric = bleu_metric(refs, bleu, made)
    sigs, scores = PairedTest(systems, {'BLEU': metric}, references=None, test_type=test, n_samples=n)()
    return {'test': test, 'n': n, 'seed': seed, 'nArConfidence': -1, 'bleu': bleu, 'signature': sigs['BLEU'].format(),
            'systems': [{'name': name, 'score': r.score, 'pValue': r.p_value, 'mean': None if r.mean is None else float(r.mean),
                         'ci': None if r.ci is None else float(r.ci)} for name, r in zip(scores['System'], scores['BLEU'])]}


# sacreBLEU's statistics are millions of short-lived tuples and Counters without cycles: the
# automatic cyclic collector scanning them cost 10-25% of the CPU time (corpus TER of two MultiWOZ
# systems: 12.2 -> 9.8 CPU seconds, peak memory the same). Off, with one collection between the
# parts of the request to bound what a cycle could hold. Results are the same bits.
gc.disable()
request = json.load(sys.stdin)
systems = [(name, lines) for name, lines in request['systems']]
refs = request['refs']
# BLEU metrics by tokenizer, shared by corpus BLEU and the paired tests (bleu_metric).
made = {}
tested = {t.get('bleu', {}).get('tokenize') or BLEU.TOKENIZER_DEFAULT for t in request.get('tests', [])}
result = {'sacrebleu': sacrebleu.__version__, 'scores': bleu_scores(systems, refs, request.get('bleu', []), made, tested), 'chrfTer': [], 'tests': []}
gc.collect()
result['chrfTer'] = chrf_ter(systems, refs, request.get('chrfTer', []))
for t in request.get('tests', []):
    gc.collect()
    result['tests'].append(paired(systems, refs, t['test'], t['n'], t['seed'], t.get('bleu', {}), made))
json.dump(result, sys.stdout)

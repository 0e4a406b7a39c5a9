#!/usr/bin/env python3
"""Expected values for todeval's significance tests, made by NumPy and sacreBLEU themselves.

    /usr/bin/python3 scripts/significance-fixtures.py --sacrebleu /path/to/sacrebleu [--out test/fixtures/significance]

Needs NumPy and a sacreBLEU source checkout (git clone https://github.com/mjpost/sacrebleu; its
dependencies regex, tabulate, portalocker, colorama and lxml; Debian: python3-numpy python3-regex
python3-tabulate python3-portalocker python3-colorama python3-lxml). A git checkout has no
sacrebleu/version.py (packaging writes it): this script writes one from `git describe` when absent.
Nothing of sacreBLEU is copied into the fixtures; they hold our own synthetic corpus, NumPy's draws
and the numbers sacreBLEU computes, plus, for sacreBLEU's WMT17 test systems, only the numbers.

Writes:
  pcg64.json            NumPy draws (SeedSequence states, random_raw, choice, bool integers, the
                        bool-then-choice order of an AR test with intervals) for several seeds/sizes
  bleu-synthetic.json   a synthetic multilingual corpus (made here from our own word lists), sacreBLEU's
                        tokenizations, corpus BLEU for every tokenizer x case, and its paired tests
  bleu-float32.json     bootstrap of large statistics, where sacreBLEU's float32 sums round
  wmt17.json            sacreBLEU on the WMT17 systems its test suite ships (scores per tokenizer,
                        paired bootstrap/randomization, and the Moses/multeval p-values of its test)

Run it with --pcg64-only under another NumPy (e.g. NumPy 2.x) and diff pcg64.json to check that
the draws do not depend on the NumPy version.
"""
import argparse
import ast
import bz2
import json
import os
import pickle
import subprocess
import sys

import numpy as np


def dumps(obj, depth=0):
    """JSON with one key per line but lists of scalars on one line (compact, still diffable)."""
    pad = ' ' * (depth + 1)
    if isinstance(obj, dict):
        if not obj:
            return '{}'
        items = [f'{pad}{json.dumps(k, ensure_ascii=False)}: {dumps(v, depth + 1)}' for k, v in obj.items()]
        return '{\n' + ',\n'.join(items) + '\n' + ' ' * depth + '}'
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return '[\n' + ',\n'.join(pad + dumps(v, depth + 1) for v in obj) + '\n' + ' ' * depth + ']'
    return json.dumps(obj, ensure_ascii=False)


def write(out_dir, name, data):
    path = os.path.join(out_dir, name)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(dumps(data) + '\n')
    print(f'wrote {path}', file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# NumPy's generator

SEEDS = [0, 1, 42, 12345, 2**32 - 1, 2**32 + 5, 2**64 + 7, 123456789012345678901234567890, [1, 2, 3], [12345, 2**40]]


def mean_value(i):
    """The i-th value of the np.mean cases (exact in float64: an integer times a power of two)."""
    return float((i * 7919) % 10007 - 5003) * 2.0 ** ((i * 31) % 41 - 20)


def pcg64_fixture():
    cases = []
    for seed in SEEDS:
        case = {'seed': [str(s) for s in seed] if isinstance(seed, list) else str(seed)}
        case['state'] = [int(x) for x in np.random.SeedSequence(seed).generate_state(8)]
        case['raw'] = [str(int(x)) for x in np.random.default_rng(seed).bit_generator.random_raw(8)]
        draws = []
        for n, rows in [(1, 2), (2, 3), (3, 4), (7, 5), (10, 3), (1000, 2), (3004, 2), (2**31 + 11, 2), (2**32 - 1, 2)]:
            rng = np.random.default_rng(seed)
            draws.append({'n': n, 'rows': rows, 'choice': [int(x) for x in rng.choice(n, size=(rows, min(n, 50)), replace=True).ravel()]})
        case['choice'] = draws
        bools = []
        for size in [1, 31, 32, 33, 95, 1000]:
            rng = np.random.default_rng(seed)
            bools.append({'size': size, 'bits': ''.join('1' if b else '0' for b in rng.integers(2, size=size, dtype=bool))})
        case['bools'] = bools
        # An AR test with intervals: (trials, n) bools, then choice(n, size=(samples, n)) from the same
        # generator; an odd number of 32-bit words leaves half a 64-bit draw buffered for the choice.
        seq = []
        for trials, n, samples in [(3, 7, 2), (5, 13, 3), (2, 48, 2)]:
            rng = np.random.default_rng(seed)
            sel = rng.integers(2, size=(trials, n), dtype=bool)
            idx = rng.choice(n, size=(samples, n), replace=True)
            seq.append({'trials': trials, 'n': n, 'samples': samples, 'bits': ''.join('1' if b else '0' for b in sel.ravel()), 'choice': [int(x) for x in idx.ravel()]})
        case['arThenChoice'] = seq
        cases.append(case)
    # np.mean of float64 vectors: pairwise summation, in 8192-value chunks under NumPy 1.x. The
    # values follow a formula that is exact in any language (integers times powers of two), so the
    # test rebuilds them and only the means are stored.
    means = []
    for n in [1, 5, 8, 9, 127, 128, 129, 1000, 8192, 8193, 20000]:
        v = np.array([mean_value(i) for i in range(n)], dtype=np.float64)
        means.append({'n': n, 'mean': float(np.mean(v))})
    return {'numpy': np.__version__, 'cases': cases, 'means': means}


# ---------------------------------------------------------------------------------------------
# A synthetic corpus: our own word lists, drawn by NumPy with a fixed seed

WORDS = {
    'en': 'the a an hotel room train station ticket price cheap expensive north south centre book booking table '
          'restaurant food Italian Chinese guest house parking wifi phone number address reference Cambridge '
          'London Monday Friday evening morning people night stay leave arrive'.split(),
    'de': 'der die das Zug Bahnhof Straße Größe schön Frühstück Zimmer buchen über Brücke Mädchen Öffnungszeit'.split(),
    'mixed': ['Hello', 'WORLD', 'İstanbul', 'ΣΟΦΊΑ', 'naïve', 'café', 'e-mail', "don't", "o'clock", 'U.S.', 'co-op', 'self-service'],
    'zh': list('我你他们的是在有这个中国人大小天上下来去好吗火车站酒店房间价格'),
    'num': ['3', '12', '2024', '3,5', '1.000', '5,300.50', '12.5', '3-4', '10:30', '17:45', '0.5', '42%', '£10', '€20', '$5'],
    'punct': [',', '.', '!', '?', ';', ':', '(', ')', '"', "'", '-', '–', '—', '…', '«', '»', '“', '”', '’', '・', '，', '。', '！', '（', '）', '「', '」'],
    'sym': ['&', '+', '=', '<', '>', '@', '#', '/', '\\', '|', '~', '^', '_', '`', '*', '{', '}', '[', ']', '→', '≤', '©', '°', '±', '😀', '✓'],
    'raw': ['&quot;', '&amp;', '&lt;', '&gt;', '<skipped>', 'a-\nb'.replace('\n', ' '), '\u00a0', '\u3000', '\u2009', '\t'],
}
KINDS = list(WORDS)
KIND_P = np.array([0.45, 0.08, 0.07, 0.12, 0.09, 0.1, 0.05, 0.04])


def synth_sentence(rng, length):
    out = ''
    for _ in range(length):
        kind = KINDS[rng.choice(len(KINDS), p=KIND_P)]
        words = WORDS[kind]
        tok = words[rng.integers(len(words))]
        # Glue some punctuation and CJK to the previous token, as real text does.
        glue = kind in ('punct', 'zh') and rng.random() < 0.6
        out += tok if (glue or not out) else ' ' + tok
    if rng.random() < 0.2:
        out += ' ' * int(rng.integers(1, 3))  # trailing spaces: stripped by sacreBLEU
    return out


def perturb(rng, sentence, rate):
    toks = sentence.split(' ')
    out = []
    for t in toks:
        r = rng.random()
        if r < rate / 3:
            continue  # drop
        if r < 2 * rate / 3:
            kind = KINDS[rng.choice(len(KINDS), p=KIND_P)]
            out.append(WORDS[kind][rng.integers(len(WORDS[kind]))])  # replace
            continue
        out.append(t.upper() if r < rate * 0.8 else t)  # case change
    if len(out) > 2 and rng.random() < rate:
        i = int(rng.integers(len(out) - 1))
        out[i], out[i + 1] = out[i + 1], out[i]
    return ' '.join(out)


def synthetic_corpus(n=240):
    rng = np.random.default_rng(20240611)
    ref0 = [synth_sentence(rng, int(rng.integers(3, 25))) for _ in range(n)]
    ref1 = [perturb(rng, s, 0.3) for s in ref0]
    ref0[5] = ''  # an empty reference segment
    systems = {
        'sys-base': [perturb(rng, s, 0.35) for s in ref0],
        'sys-close': [perturb(rng, s, 0.32) for s in ref0],
        'sys-worse': [perturb(rng, s, 0.55) for s in ref0],
        'sys-short': [' '.join(perturb(rng, s, 0.3).split(' ')[: max(1, len(s.split(' ')) // 2)]) for s in ref0],
    }
    systems['sys-base-copy'] = list(systems['sys-base'])
    systems['sys-close'][7] = ''  # an empty hypothesis
    return {'references': [ref0, ref1], 'systems': systems}


# ---------------------------------------------------------------------------------------------
# sacreBLEU


def load_sacrebleu(checkout):
    version_py = os.path.join(checkout, 'sacrebleu', 'version.py')
    if not os.path.exists(version_py):
        try:
            tag = subprocess.run(['git', '-C', checkout, 'describe', '--tags', '--abbrev=0'], capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            tag = 'v0.0.0'
        with open(version_py, 'w') as f:
            f.write(f'__version__ = "{tag.lstrip("v")}"\n')
    sys.path.insert(0, checkout)
    import sacrebleu  # noqa: F401
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest, _bootstrap_resample, estimate_ci
    return BLEU, PairedTest, _bootstrap_resample, estimate_ci, sacrebleu.__version__


TOKENIZERS = ['13a', 'none', 'intl', 'char', 'zh']


def bleu_json(score):
    return {'score': score.score, 'counts': [int(c) for c in score.counts], 'totals': [int(t) for t in score.totals],
            'precisions': list(score.precisions), 'bp': score.bp, 'sysLen': int(score.sys_len), 'refLen': int(score.ref_len)}


def result_json(name, r):
    return {'name': name, 'score': r.score, 'pValue': r.p_value, 'mean': None if r.mean is None else float(r.mean), 'ci': None if r.ci is None else float(r.ci)}


def paired(PairedTest, BLEU, systems, refs, test, n, seed, n_ar_confidence=-1, **bleu_args):
    os.environ['SACREBLEU_SEED'] = str(seed)
    metric = BLEU(references=refs, **bleu_args)
    sigs, scores = PairedTest(systems, {'BLEU': metric}, references=None, test_type=test, n_samples=n, n_ar_confidence=n_ar_confidence)()
    return {'test': test, 'n': n, 'seed': seed, 'nArConfidence': n_ar_confidence, 'bleu': bleu_args, 'signature': sigs['BLEU'].format(),
            'systems': [result_json(name, r) for name, r in zip(scores['System'], scores['BLEU'])]}


def confidence(BLEU, system, refs, n, seed, **bleu_args):
    os.environ['SACREBLEU_SEED'] = str(seed)
    metric = BLEU(**bleu_args)
    score = metric.corpus_score(system, refs, n_bootstrap=n)
    return {'n': n, 'seed': seed, 'bleu': bleu_args, 'signature': metric.get_signature().format(), 'score': score.score, 'mean': score._mean, 'ci': score._ci}


def synthetic_fixture(sb):
    BLEU, PairedTest, _, _, version = sb
    corpus = synthetic_corpus()
    refs = corpus['references']
    names = list(corpus['systems'])
    scores = []
    for tok in TOKENIZERS:
        for lc in (False, True):
            for nrefs in (1, 2):
                metric = BLEU(tokenize=tok, lowercase=lc)
                for name in names:
                    s = metric.corpus_score(corpus['systems'][name], refs[:nrefs])
                    scores.append({'system': name, 'tokenize': tok, 'lowercase': lc, 'nrefs': nrefs, 'signature': metric.get_signature().format(), **bleu_json(s)})
    tokenized = {tok: [BLEU(tokenize=tok).tokenizer(line.rstrip()) for line in refs[0][:60] + corpus['systems']['sys-worse'][:60]] for tok in TOKENIZERS}
    systems = [(n, corpus['systems'][n]) for n in names]
    tests = [
        paired(PairedTest, BLEU, systems, refs, 'bs', 1000, 12345),
        paired(PairedTest, BLEU, systems, refs, 'bs', 500, 7, tokenize='intl', lowercase=True),
        paired(PairedTest, BLEU, systems, refs, 'ar', 10000, 12345),
        paired(PairedTest, BLEU, systems, refs, 'ar', 2000, 99, n_ar_confidence=300, tokenize='zh'),
    ]
    confidences = [dict(system=n, **confidence(BLEU, corpus['systems'][n], refs, 1000, 12345)) for n in names[:3]]
    confidences.append(dict(system=names[3], **confidence(BLEU, corpus['systems'][names[3]], refs[:1], 400, 2024, tokenize='char')))
    return {'sacrebleu': version, 'numpy': np.__version__, 'corpus': corpus, 'scores': scores, 'tokenized': tokenized, 'tests': tests, 'confidence': confidences}


def float32_fixture(sb):
    """Statistics large enough that float32 sums round (n * max >= 2^24): sacreBLEU's bootstrap sums in float32."""
    BLEU, _, _bootstrap_resample, estimate_ci, version = sb
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(150):
        sys_len = int(rng.integers(80_000, 200_000))
        ref_len = int(sys_len + rng.integers(-20_000, 20_000))
        totals = [max(0, sys_len - k) for k in range(4)]
        counts = [int(t * rng.uniform(0.2, 0.7) ** (k + 1)) for k, t in enumerate(totals)]
        rows.append([sys_len, ref_len] + counts + totals)
    os.environ['SACREBLEU_SEED'] = '12345'
    metric = BLEU()
    _, scores = _bootstrap_resample(rows, metric, 300)
    mean, ci = estimate_ci(np.array([s.score for s in scores]))
    return {'sacrebleu': version, 'numpy': np.__version__, 'seed': 12345, 'samples': 300, 'stats': rows,
            'scores': [s.score for s in scores], 'mean': float(mean), 'ci': float(ci)}


def literal_dict(source, name):
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise KeyError(name)


def read_wmt17(checkout):
    """The WMT17 systems of sacreBLEU's test suite: [(name, lines)] and the one reference stream."""
    with bz2.BZ2File(os.path.join(checkout, 'test', 'wmt17_en_de_systems.pkl.bz2'), 'rb') as f:
        named = pickle.load(f)
    _, refs = named.pop()
    return named, refs


def wmt17_fixture(sb, checkout):
    BLEU, PairedTest, _, _, version = sb
    named, refs = read_wmt17(checkout)
    with open(os.path.join(checkout, 'test', 'test_significance.py'), encoding='utf-8') as f:
        source = f.read()
    scores = []
    for tok in TOKENIZERS:
        metric = BLEU(references=refs, tokenize=tok)
        for name, hyps in named:
            scores.append({'system': name, 'tokenize': tok, 'signature': metric.get_signature().format(), **bleu_json(metric.corpus_score(hyps, None))})
    print('wmt17: paired tests (a few minutes)', file=sys.stderr)
    tests = [
        paired(PairedTest, BLEU, named, refs, 'bs', 2000, 12345, tokenize='none'),  # test_significance.py's run
        paired(PairedTest, BLEU, named, refs, 'bs', 1000, 12345, tokenize='none'),
        paired(PairedTest, BLEU, named, refs, 'ar', 10000, 12345, tokenize='none'),
    ]
    return {'sacrebleu': version, 'numpy': np.__version__, 'systems': [n for n, _ in named], 'scores': scores, 'tests': tests,
            'confidence': confidence(BLEU, named[0][1], refs, 1000, 12345),
            # The reference p-values sacreBLEU's test_significance.py checks its own to 0.01 against.
            'mosesPValues': literal_dict(source, 'MOSES_P_VALS'),
            'multevalPValues': {k: v[0] for k, v in literal_dict(source, 'MULTEVAL_P_VALS').items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sacrebleu', help='sacreBLEU source checkout')
    ap.add_argument('--out', default=os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'significance'))
    ap.add_argument('--pcg64-only', action='store_true', help='only the NumPy draws (no sacreBLEU needed)')
    ap.add_argument('--skip-wmt17', action='store_true', help='leave wmt17.json as it is (its paired tests take minutes)')
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    write(args.out, 'pcg64.json', pcg64_fixture())
    if args.pcg64_only:
        return
    if not args.sacrebleu:
        ap.error('--sacrebleu CHECKOUT is needed for the BLEU fixtures (or pass --pcg64-only)')
    sb = load_sacrebleu(os.path.abspath(args.sacrebleu))
    write(args.out, 'bleu-synthetic.json', synthetic_fixture(sb))
    write(args.out, 'bleu-float32.json', float32_fixture(sb))
    if not args.skip_wmt17:
        write(args.out, 'wmt17.json', wmt17_fixture(sb, os.path.abspath(args.sacrebleu)))


if __name__ == '__main__':
    main()

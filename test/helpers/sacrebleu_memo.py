"""sacreBLEU's per-segment extraction, computed once per process by sacreBLEU's own code and then
remembered: sacrebleu-driver.py (test/sacrebleu-dropin.test.ts) asks the same questions many
times over (six BLEU smoothings of one system print the same statistics, every command line
rebuilds the reference cache of the same reference file, and sentence_score builds it a second
time for each segment), and Python spent most of their time there.

Why the numbers stay sacreBLEU's: every value is what sacreBLEU's method returned the first time
for the same arguments and the same metric configuration, and those methods are pure functions of
them. In sacreBLEU 2.6.0 (metrics/bleu.py, ter.py, base.py):
- `_preprocess_segment(sent)` reads the tokenizer and the case options only (a str comes back);
- `_extract_reference_info(refs)` reads max_ngram_order (BLEU), the tokenizer (TER: it
  preprocesses again), and its dict is only read afterwards
  (`_compute_segment_statistics` looks n-grams and words up; nothing assigns into it);
- `_compute_segment_statistics(hyp, ref_kwargs)` reads max_ngram_order (BLEU), nothing (TER).
The key is the metric's class and every option its constructor stores except BLEU's smoothing
(smooth_method, smooth_value, effective_order), which only `_compute_score_from_stats` reads: so
the six smoothings share statistics and nothing else does. Statistics come back as a fresh list
(BLEU's add-k smoothing adds to slices of them, never to them; a copy makes that moot). A
reference dict is keyed by its identity, which cannot be reused while the memo holds the dict.
The warnings and the signature's num_refs stay sacreBLEU's: `_cache_references` and
`_extract_corpus_statistics` themselves still run, each segment's three calls answered here.
A wrong answer could not pass unnoticed either: the tests compare against todeval's own code.
"""
import gc

from sacrebleu.metrics import BLEU, TER

# Per class: the attributes its extraction reads (see above), all but BLEU's smoothing. chrF is
# left to sacreBLEU: its references' character n-gram Counters held for the process doubled the
# driver's peak memory (316 -> 580 MB on the 17 MultiWOZ command lines) to save 1.8 of 32 CPU-s.
_CONFIG = {
    BLEU: lambda m: (type(m.tokenizer).__qualname__, m.tokenizer_signature, m.lowercase, m.max_ngram_order),
    TER: lambda m: (m.normalized, m.no_punct, m.asian_support, m.case_sensitive),
}


def _install(cls, config):
    preprocess = cls._preprocess_segment
    reference_info = cls._extract_reference_info
    segment_statistics = cls._compute_segment_statistics
    texts, refs, stats = {}, {}, {}

    def _preprocess_segment(self, sent):
        key = (config(self), sent)
        out = texts.get(key)
        if out is None:
            out = texts[key] = preprocess(self, sent)
        return out

    def _extract_reference_info(self, lines):
        key = (config(self), tuple(lines))
        out = refs.get(key)
        if out is None:
            out = refs[key] = reference_info(self, lines)
        return out

    def _compute_segment_statistics(self, hypothesis, ref_kwargs):
        key = (config(self), hypothesis, id(ref_kwargs))
        hit = stats.get(key)
        if hit is None or hit[0] is not ref_kwargs:
            hit = stats[key] = (ref_kwargs, segment_statistics(self, hypothesis, ref_kwargs))
        return list(hit[1])

    cls._preprocess_segment = _preprocess_segment
    cls._extract_reference_info = _extract_reference_info
    cls._compute_segment_statistics = _compute_segment_statistics


def install():
    """Remembers the three extraction methods of BLEU and TER for the rest of the process."""
    for cls, config in _CONFIG.items():
        _install(cls, config)


def collect():
    """One full collection, then what survives (the memo above all) frozen out of later ones: the
    drivers collect between cases, and scanning a memo of millions of n-gram Counters each time
    would cost more than it saves."""
    gc.collect()
    gc.freeze()

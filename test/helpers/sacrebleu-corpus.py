# sacreBLEU (a source checkout, argv[1]) as the peer of our text metrics: reads {"hyps": [...], "refs": [...]}
# on stdin and prints its corpus BLEU, chrF2, chrF2++ and TER of them, with their signatures, as JSON.
import gc, json, sys
# No cyclic garbage collection: sacreBLEU's short-lived tuples and Counters form no cycles, and the
# collector scanning them cost ~20% of TER's CPU time here. Results are the same bits.
gc.disable()
sys.path.insert(0, sys.argv[1])
from sacrebleu.metrics import BLEU, CHRF, TER
d = json.load(sys.stdin)
out = {}
for name, m in [('BLEU', BLEU()), ('chrF2', CHRF()), ('chrF2++', CHRF(word_order=2)), ('TER', TER())]:
    s = m.corpus_score(d['hyps'], [d['refs']])
    out[name] = {'score': s.score, 'signature': str(m.get_signature())}
print(json.dumps(out))

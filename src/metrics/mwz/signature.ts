import { makeSignature, type Signature } from '../../util/signature.js';
import { GROUND_TRUTH_BUILDER_VERSION } from './ground-truth.js';

/** What decides an `evaluate` run's numbers (mwzeval's metrics), as the Evaluator computed them. */
export interface MwzSigned {
  /** The ground truth's label (groundTruthLabel: the data and its digest). */
  data: string;
  /** Each text metric's own signature (sacreBLEU's `|`-joined form), when it was computed. */
  bleu?: string;
  chrf?: { name: string; signature: string };
  ter?: string;
  success?: boolean;
  dst?: boolean;
  stateSource?: string;
  domainSource?: string;
  /** Where the data dir came from (provenance, not compared). */
  dataDir?: string;
  dialogues: number;
  /** Invalid dialogues left out (skipInvalid). */
  skipped: number;
}

/** The signature of `todeval evaluate` (and the Python Evaluator, and evaluate shards before their shard is added). */
export function mwzSignature(s: MwzSigned): Signature {
  return makeSignature({
    metric: 'mwz-evaluate',
    data: s.data,
    groundTruthBuilder: GROUND_TRUTH_BUILDER_VERSION,
    // The text metrics' signatures inside ours: their `|` would read as our separator.
    bleu: s.bleu?.replaceAll('|', ','),
    chrf: s.chrf && `${s.chrf.name},${s.chrf.signature.replaceAll('|', ',')}`,
    ter: s.ter?.replaceAll('|', ','),
    dbFuzzyRatio: s.success ? 90 : undefined,
    dstFuzzyRatio: s.dst ? 95 : undefined,
    stateSource: s.stateSource,
    domainSource: s.domainSource,
    dataDir: s.dataDir,
    dialogues: s.dialogues,
    skipped: s.skipped > 0 ? s.skipped : undefined,
  });
}

import type { MwzEvaluation } from '../metrics/mwz/evaluator.js';
import type { SgsaccMergeResult } from '../metrics/mwz/sgsacc-merge.js';
import { summarizeSgsacc, type SgsaccTally } from '../metrics/sgsacc/aggregate.js';
import { mergeSentenceShards, type SentenceShardTally } from '../metrics/sgsacc/aggregate-sentences.js';
import { MODEL_SIGNATURE_KEYS } from '../nli/types.js';
import { InputError } from '../util/errors.js';
import type { Signature } from '../util/signature.js';
import { byShardIndex, checkShardSet, mergeSerCounts, runSignature, signatureDifference, type LoadedShard } from './merge.js';
import type { ShardBlock } from './spec.js';

/** The report of `todeval evaluate` (-o), with its SGSAcc section when --sgsacc found lexicalized turns. */
export type EvaluateReport = MwzEvaluation & { sgsacc?: SgsaccMergeResult | null };

/**
 * `todeval evaluate --sgsacc --shard K/N -o FILE`: the mwzeval metrics over the whole input (every
 * shard computes them: they are cheap, and corpus BLEU or lexical richness do not add up from
 * parts), the SGSAcc section over this shard's dialogues only, plus the counts that merge.
 */
export interface EvaluateShardReport extends EvaluateReport {
  shard: ShardBlock & {
    /** The SGSAcc tally of this shard's lexicalized turns; null when it has none. */
    tally: SgsaccTally | null;
    /** This shard's turns with and without lexicalized text (kept even when it scored none). */
    turns: { lexicalized: number; delexicalized: number };
    /** With --granularity sentence, when this shard scored turns (SentenceShardTally). */
    sentences?: SentenceShardTally;
  };
}

/**
 * Signature keys --sgsacc adds only when it scored something (every key evaluateSgsaccSignature may
 * add): a shard without lexicalized turns lacks them, and the shards that scored must agree on them.
 */
export const SGSACC_KEYS: readonly string[] = [...MODEL_SIGNATURE_KEYS, 'rules', 'schema', 'validation', 'context', 'referenceSelection', 'contextControl', 'granularity', 'delexicalized'];

/**
 * The report one `evaluate --sgsacc` over the whole input gives: the mwzeval sections from shard 1
 * (all shards computed them over the same input, and their signatures agree), the SGSAcc section
 * recomputed from the summed tallies and SER counts.
 */
export function mergeEvaluateReports(loaded: readonly LoadedShard<EvaluateShardReport>[]): EvaluateReport {
  checkShardSet(loaded, SGSACC_KEYS);
  const ordered = byShardIndex(loaded);
  const scored = ordered.filter((s) => s.report.sgsacc && s.report.shard.tally);
  for (const s of scored.slice(1)) {
    const only = (sig: Signature) => Object.fromEntries(SGSACC_KEYS.map((k) => [k, sig[k]])) as Signature;
    const [first, other] = [scored[0], s].map((x) => ({ file: x.file, signature: only(x.report.signature) }));
    const differs = signatureDifference(first, other);
    if (differs) throw new InputError(`not the same run as ${scored[0].file}: ${differs}`, { file: s.file });
  }
  const base = (scored[0] ?? ordered[0]).report;
  const { shard: _shard, ...rest } = base;
  const merged: EvaluateReport = { ...rest, signature: runSignature(base.signature) };
  if (scored.length === 0) return merged;

  const parts = scored.map((s) => s.report.sgsacc!);
  const validation = parts[0].sgsacc.validated !== null;
  const { counts, ...sgsacc } = summarizeSgsacc(
    scored.map((s) => s.report.shard.tally!),
    validation,
  );
  const turns = (k: 'lexicalized' | 'delexicalized') => ordered.reduce((n, s) => n + s.report.shard.turns[k], 0);
  merged.sgsacc = {
    sgsacc,
    counts: { ...counts, lexicalizedTurns: turns('lexicalized'), delexicalizedTurns: turns('delexicalized') },
    ser: mergeSerCounts(parts.map((p) => ({ ...p.ser, perService: p.ser.perService as Record<string, { errors: number; total: number }> }))),
    referenceSelection: parts[0].referenceSelection,
    // Shards written before the control existed ran without it.
    contextControl: parts[0].contextControl ?? false,
    model: parts[0].model,
    ...(parts[0].skipDelexicalized ? { skipDelexicalized: true } : {}),
    // The sentence section as score's merge joins it: counts summed, intervals drawn again over all turns.
    ...(base.signature.granularity === 'sentence' ? { sentences: mergeSentenceShards(scored.map((s) => ({ file: s.file, part: s.report.shard.sentences })), validation) } : {}),
  };
  return merged;
}

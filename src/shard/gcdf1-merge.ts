import { gcdf1Report, perDialogueDocument, recordFromData, type DialogueRecordData, type Gcdf1Report } from '../metrics/gcdf1/report.js';
import { inRunOrder } from '../util/run-order.js';
import type { Signature } from '../util/signature.js';
import { byShardIndex, checkShardSet, type LoadedShard } from './merge.js';
import type { ShardBlock } from './spec.js';

/** `todeval gcdf1 --shard K/N -o FILE`: the report of its dialogues, plus their records to merge. */
export interface Gcdf1ShardReport extends Gcdf1Report {
  shard: ShardBlock & {
    /** This shard's dialogue records in run order: the means are recomputed from them, not averaged. */
    records: DialogueRecordData[];
  };
}

/** A gcdf1 shard as readShardReport gives it: its metadata's signature also at the top, as merge.ts compares them. */
export type Gcdf1LoadedShard = Gcdf1ShardReport & { signature: Signature };

/**
 * The report one `todeval gcdf1` over all the shards' dialogues gives. A GCDF1 score is a mean of
 * per-dialogue floats: merging means would round differently, so the shards carry their records
 * and the merge recomputes every mean from all of them, in the unsharded run's order, with the
 * code that run uses. `perDialogue` is the document `--per-dialogue` writes for the whole run.
 */
export function mergeGcdf1Reports(loaded: readonly LoadedShard<Gcdf1LoadedShard>[]): { report: Gcdf1Report; perDialogue: ReturnType<typeof perDialogueDocument> } {
  // Each shard counts only its own dialogues: the run's count is their sum.
  checkShardSet(loaded, ['dialogues']);
  const shards = byShardIndex(loaded).map((s) => s.report);
  const records = inRunOrder(shards.map((r) => ({ items: r.shard.records, at: r.shard.positions })));
  const first = shards[0].metadata;
  // The shard's signature with the run's count, keys in the unsharded run's order.
  const signature: Signature = { ...first.signature, dialogues: records.length };
  delete signature.shard;
  return {
    report: gcdf1Report(records.map(recordFromData), signature, first.invalid, first.evaluation_config),
    perDialogue: perDialogueDocument(records, signature),
  };
}

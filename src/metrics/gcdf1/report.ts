import type { Signature } from '../../util/signature.js';
import { formatSignature } from '../../util/signature.js';
import type { Gcdf1Config } from './config.js';
import { aggregate, behaviourCounts, type Gcdf1Scores, type InvalidDialogue } from './evaluate.js';
import { DialogueRecord } from './record.js';

/** `todeval gcdf1 -o`: the reference's score tables, then what they were computed from. */
export type Gcdf1Report = Omit<Gcdf1Scores, 'counts'> & {
  metadata: {
    signature: Signature;
    signature_string: string;
    counts: Gcdf1Scores['counts'];
    behaviour_counts: ReturnType<typeof behaviourCounts>;
    invalid: InvalidDialogue[];
    evaluation_config: Gcdf1Config;
  };
};

/** One dialogue's record as files carry it (--per-dialogue, a shard report). */
export interface DialogueRecordData {
  dialogueId: string;
  scores: DialogueRecord['scores'];
  behaviours: DialogueRecord['behaviours'];
}

/**
 * The report of the given dialogue records, in their order: the unsharded run and the merge of its
 * shards both build it here, from the same records in the same order, so the means (float sums in
 * record order) come out bit for bit alike.
 */
export function gcdf1Report(records: readonly DialogueRecord[], signature: Signature, invalid: InvalidDialogue[], config: Gcdf1Config): Gcdf1Report {
  const { counts, ...tables } = aggregate([...records]);
  return {
    ...tables,
    metadata: {
      signature,
      signature_string: formatSignature(signature),
      counts,
      behaviour_counts: behaviourCounts([...records]),
      invalid,
      evaluation_config: config,
    },
  };
}

/** `--per-dialogue`: each dialogue's scores and detected behaviours, by dialogue id. */
export function perDialogueDocument(records: readonly DialogueRecordData[], signature: Signature): { signature: Signature; dialogues: Record<string, { scores: DialogueRecordData['scores']; behaviours: DialogueRecordData['behaviours'] }> } {
  return { signature, dialogues: Object.fromEntries(records.map((r) => [r.dialogueId, { scores: r.scores, behaviours: r.behaviours }])) };
}

/** A record read back from a file, as evaluateDialogue made it. */
export function recordFromData(d: DialogueRecordData): DialogueRecord {
  const r = new DialogueRecord(d.dialogueId);
  Object.assign(r.scores, d.scores);
  Object.assign(r.behaviours, d.behaviours);
  return r;
}

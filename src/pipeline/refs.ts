import { loadDataset, type LoadDatasetOptions } from '../adapters/load.js';
import { Expander } from '../rules/expand.js';
import { loadRules } from '../rules/load.js';
import { countCoverage, type ActCoverage } from '../rules/coverage.js';
import type { ActionReferences } from '../rules/types.js';
import { buildValueIndex } from '../rules/value-index.js';
import { AtomicFile } from '../util/atomic-write.js';
import { makeSignature, type Signature } from '../util/signature.js';
import type { PipelineHooks } from './hooks.js';

export type { ActCoverage };

export interface RefsPipelineOptions extends Omit<LoadDatasetOptions, 'limit'> {
  /** Expand only the first N system turns (negatives still draw values from every turn loaded). */
  limit?: number;
  /** Write the references here (JSONL, one line per action, whole or not at all) and the signature to `<output>.signature.json`. */
  output?: string;
  /** Receives the JSONL as it is made, in pieces (the CLI's stdout); awaited, so a slow reader slows the expansion instead of filling memory. */
  write?: (text: string) => void | Promise<void>;
  hooks?: Pick<PipelineHooks, 'skipped'>;
}

export interface RefsResult {
  signature: Signature;
  /** Coverage by act, in the order the acts were first met. */
  coverage: Map<string, ActCoverage>;
  /** The dataset read (as signatures name it), the system turns expanded and the invalid items skipped. */
  source: string;
  turns: number;
  invalid: number;
  rules: { hash: string; files: string[] };
}

/** The line written per action; field order fixed so files diff cleanly. */
function referenceLine(r: ActionReferences): Record<string, unknown> {
  return { id: r.id, service: r.service, act: r.act, slot: r.slot, values: r.values, candidates: r.candidates, negatives: r.negatives, slotDescription: r.slotDescription, rule: r.rule ?? null };
}

/**
 * `todeval refs` as a library call: every system action of a dataset expanded into candidate and
 * negative references by the rules, written as JSONL (to `output`, to `write`, or neither when only
 * the coverage is wanted), with the per-act coverage and the signature.
 */
export async function runRefsPipeline(o: RefsPipelineOptions): Promise<RefsResult> {
  const loaded = loadDataset({ dataset: o.dataset, dataDir: o.dataDir, split: o.split, input: o.input, schemaFile: o.schemaFile, skipInvalid: o.skipInvalid });
  // Negatives draw free-text values from all loaded turns, so a --limit slice gets the same
  // references as the full run; only the expansion is limited.
  const valueIndex = buildValueIndex(loaded.turns);
  if (o.limit !== undefined) loaded.turns = loaded.turns.slice(0, o.limit);
  o.hooks?.skipped?.('input', loaded.invalid);
  const rules = loadRules(o.dataset);
  const expander = new Expander(loaded.schema, rules, valueIndex);
  const signature = refsSignature({ rulesHash: rules.hash, dataset: o.dataset, data: loaded.source, limit: o.limit });
  const coverage = new Map<string, ActCoverage>();
  // Written whole or not at all: a failure mid-way leaves no half reference file behind.
  const out = o.output ? new AtomicFile(o.output) : undefined;
  let buffer: string[] = [];
  const flush = async (): Promise<void> => {
    if (buffer.length === 0) return;
    const text = buffer.join('');
    buffer = [];
    out?.write(text);
    await o.write?.(text);
  };
  try {
    for (const turn of loaded.turns) {
      for (const r of expander.expandTurn(turn)) {
        countCoverage(coverage, r);
        if (out || o.write) buffer.push(`${JSON.stringify(referenceLine(r))}\n`);
      }
      if (buffer.length >= 2000) await flush();
    }
    await flush();
  } catch (e) {
    out?.abort();
    throw e;
  }
  if (out) commitWithSignature(out, `${o.output}.signature.json`, signature);
  return { signature, coverage, source: loaded.source, turns: loaded.turns.length, invalid: loaded.invalid.length, rules: { hash: rules.hash, files: rules.files } };
}

/** The signature of `todeval refs` (the references a dataset's turns expand to): the rules, the dataset, its turns. Its one builder. */
export function refsSignature(s: { rulesHash: string; dataset: string; data: string; limit?: number }): Signature {
  return makeSignature({ rules: s.rulesHash, dataset: s.dataset, data: s.data, limit: s.limit });
}

/**
 * The references and their signature replaced as a pair: both written in full and fsync'ed before
 * either is renamed into place, so a failure of either write (a full disk, a signature path that
 * cannot be written) leaves the old references and the old signature as they were. The references
 * were renamed first before, and a signature write that failed then left the old signature beside
 * the new references, which nothing in the JSONL could tell apart. What remains is two renames in
 * one folder one after the other: no await between them (a Ctrl-C is handled after both), and
 * only a failing second rename or a hard kill between the two can part them.
 */
function commitWithSignature(refs: AtomicFile, signatureFile: string, signature: Signature): void {
  let sig: AtomicFile | undefined;
  try {
    sig = new AtomicFile(signatureFile);
    sig.write(`${JSON.stringify(signature, null, 2)}\n`);
    sig.sync();
    refs.sync();
    refs.commit();
    sig.commit();
  } catch (e) {
    // After a commit this removes nothing: its temporary file is already renamed.
    sig?.abort();
    refs.abort();
    throw e;
  }
}

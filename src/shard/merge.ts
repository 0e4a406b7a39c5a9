import path from 'node:path';
import { serPercent } from '../metrics/ser.js';
import { COMPLETED_FIELDS, RecordStore, type StoreKind } from '../metrics/sgsacc/store.js';
import { readRecordLines, recordRelation } from '../util/record-lines.js';
import { checkRunReport } from '../util/run-report-schema.js';
import { fieldDifferences, normalizeSignature, type Signature } from '../util/signature.js';
import { InputError } from '../util/errors.js';
import { parseJsonText, readTextFile } from '../util/json-file.js';
import { pathInReport, shardLabel, type ShardBlock } from './spec.js';

/** A shard report as `todeval merge` reads it: the command's report plus its shard block. */
export interface ShardReport {
  signature: Signature;
  shard: ShardBlock;
}

export interface LoadedShard<R extends ShardReport = ShardReport> {
  file: string;
  report: R;
}

/** Reads a shard report, refusing a file that is not one (a merged or unsharded report, say). */
export function readShardReport(file: string): LoadedShard {
  const parsed = parseJsonText<Partial<ShardReport> & { metadata?: { signature?: Signature } }>(readTextFile(file, 'shard report'), file);
  // gcdf1 keeps its signature in `metadata`, as the reference's output has no top-level fields of ours.
  const gcdf1Signature = typeof parsed === 'object' && parsed !== null && parsed.signature === undefined ? parsed.metadata?.signature : undefined;
  const report = gcdf1Signature ? { ...parsed, signature: gcdf1Signature } : parsed;
  if (typeof report !== 'object' || report === null || typeof report.signature !== 'object' || report.signature === null) {
    throw new InputError('not a todeval report (no signature)', { file });
  }
  const s = report.shard;
  if (typeof s !== 'object' || s === null || !Number.isInteger(s.index) || !Number.isInteger(s.count)) {
    throw new InputError('not a shard report (no shard block): it was written without --shard', { file });
  }
  checkRunReport(report, normalizeSignature(report.signature as Signature).metric, file);
  // Shards written before the signature vocabulary was unified compare in today's keys.
  return { file, report: { ...(report as ShardReport), signature: normalizeSignature(report.signature as Signature) } };
}

/**
 * Refuses a set of shard reports that is not exactly one run: reports of another configuration
 * (signatures differ beyond `perShard` keys), of another split (N differs), a shard given twice
 * or one missing. Each refusal is one line naming the files or shards at fault.
 */
export function checkShardSet(shards: readonly LoadedShard[], perShard: readonly string[] = []): void {
  if (shards.length === 0) throw new InputError('no shard reports to merge');
  const [first] = shards;
  for (const s of shards.slice(1)) {
    if (s.report.shard.count !== first.report.shard.count) {
      throw new InputError(
        `shard ${shardLabel(s.report.shard)} is from a split into ${s.report.shard.count}, ${first.file} from a split into ${first.report.shard.count}`,
        { file: s.file },
      );
    }
    // By content: shards run on machines with other checkouts name the same file by other paths.
    const differs = signatureDifference({ file: first.file, signature: first.report.signature }, { file: s.file, signature: s.report.signature }, perShard);
    if (differs) throw new InputError(`not the same run as ${first.file}: ${differs}`, { file: s.file });
  }
  const byIndex = new Map<number, string>();
  for (const s of shards) {
    const other = byIndex.get(s.report.shard.index);
    if (other) throw new InputError(`shard ${shardLabel(s.report.shard)} given twice: ${other} and ${s.file}`);
    byIndex.set(s.report.shard.index, s.file);
  }
  const count = first.report.shard.count;
  const missing: string[] = [];
  for (let k = 1; k <= count; k++) if (!byIndex.has(k)) missing.push(shardLabel({ index: k, count }));
  if (missing.length > 0) {
    throw new InputError(`missing shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: the run was split into ${count}, ${shards.length} given`);
  }
}

/**
 * Where two signatures differ, decided on their comparable parts as everywhere (fieldDifferences),
 * key by key with both values as written and the file each came from:
 * `hallucination is true in a.json, not set in b.json` (a key one of them lacks is "not set").
 * Empty when they are the same run; `shard` and the `skip` keys are not compared.
 */
export function signatureDifference(a: { file: string; signature: Signature }, b: { file: string; signature: Signature }, skip: readonly string[] = []): string {
  const [la, lb] = [path.basename(a.file), path.basename(b.file)];
  const [na, nb] = la === lb ? [a.file, b.file] : [la, lb];
  return fieldDifferences(a.signature, b.signature, ['shard', ...skip])
    .map((d) => `${d.key} is ${d.a} in ${na}, ${d.b} in ${nb}`)
    .join('; ');
}

/** Shards in index order (the order their parts stand in the unsharded run). */
export function byShardIndex<R extends ShardReport>(shards: readonly LoadedShard<R>[]): LoadedShard<R>[] {
  return [...shards].sort((a, b) => a.report.shard.index - b.report.shard.index);
}

/** The run's signature: a shard's without its shard key (and with `set` applied). */
export function runSignature(sig: Signature, set: Record<string, Signature[string]> = {}): Signature {
  const out = { ...sig };
  delete out.shard;
  for (const [k, v] of Object.entries(set)) {
    delete out[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The SER counts a shard report carries: overall and per service. */
export interface SerCountsPart {
  errors: number;
  utterancesWithValues: number;
  perService: Record<string, { errors: number; total: number }>;
}

/**
 * SER over all the shards' utterances, from their summed errors and utterances, overall and per
 * service (services sorted): the section an unsharded run computes, whatever else a report adds.
 */
export function mergeSerCounts(parts: readonly SerCountsPart[]): {
  ser: number;
  errors: number;
  utterancesWithValues: number;
  perService: Record<string, { ser: number; errors: number; total: number }>;
} {
  const sum = (f: (p: SerCountsPart) => number) => parts.reduce((n, p) => n + f(p), 0);
  const perService: Record<string, { ser: number; errors: number; total: number }> = {};
  for (const svc of [...new Set(parts.flatMap((p) => Object.keys(p.perService)))].sort()) {
    const errors = sum((p) => p.perService[svc]?.errors ?? 0);
    const total = sum((p) => p.perService[svc]?.total ?? 0);
    perService[svc] = { ser: serPercent(errors, total), errors, total };
  }
  const errors = sum((p) => p.errors);
  const withValues = sum((p) => p.utterancesWithValues);
  return { ser: serPercent(errors, withValues), errors, utterancesWithValues: withValues, perService };
}

/**
 * Joins the shards' record files (per-turn results, references, rerank items) into `outFile`,
 * whose header is the run's (the shard key dropped): the file an unsharded run writes, with the
 * same records. An existing `outFile` of the same kind and configuration keeps its records (the
 * references of earlier runs, say); one of another configuration is refused as RecordStore does.
 * Returns the number of records in the merged file.
 */
export function mergeRecordFiles(shards: readonly LoadedShard[], which: keyof ShardBlock['files'], kind: StoreKind, outFile: string): number {
  const named = shards.filter((s) => s.report.shard.files[which] !== undefined);
  if (named.length === 0) throw new InputError(`the shard reports name no ${which} files to merge (run the shards with ${which === 'turns' ? '--turns' : '--references'})`);
  if (named.length < shards.length) {
    const without = shards.find((s) => s.report.shard.files[which] === undefined)!;
    throw new InputError(`this shard was run without a ${which} file, so the merged ${which} file would be incomplete`, { file: without.file });
  }
  // In shard order, whatever order the reports were given in: a shard's turns all stand before the next shard's in the run.
  const parts = byShardIndex(named).map((s) => {
    const file = pathInReport(s.file, s.report.shard.files[which]!);
    if (path.resolve(file) === path.resolve(outFile)) throw new InputError(`the merged ${which} file would overwrite a shard's own`, { file });
    const read = readRecords(file, kind);
    refuseOtherShardsFile(s, which, file, read.signature);
    refuseShortShard(s, which, file, read.records.length);
    return { file, ...read };
  });
  const signature = runSignature(parts[0].signature);
  for (const p of parts.slice(1)) {
    const differs = signatureDifference({ file: parts[0].file, signature }, { file: p.file, signature: runSignature(p.signature) });
    if (differs) throw new InputError(`not the same run as ${parts[0].file}: ${differs}`, { file: p.file });
  }
  const store = RecordStore.open<{ id: string }>(outFile, kind, signature);
  // Every record is checked against what is kept for its id (outFile's own, an earlier shard's)
  // before anything is appended, by the one reader's rule (readRecordLines): the same record is
  // one record, a completed one replaces it, a conflicting one is refused, as keeping either
  // (first wins) would silently change the scores. A refused merge appends nothing to outFile.
  const kept = new Map<string, { rec: { id: string }; file: string }>();
  for (const [id, rec] of store.done) kept.set(id, { rec, file: outFile });
  const fresh = parts.map((p) => {
    const add: { id: string }[] = [];
    for (const rec of p.records) {
      const earlier = kept.get(rec.id);
      const relation = earlier ? recordRelation(earlier.rec, rec, COMPLETED_FIELDS[kind]) : 'completes';
      if (relation === 'conflict') {
        throw new InputError(
          `id ${JSON.stringify(rec.id)} has a different record in ${earlier!.file}; the files are of other runs or were edited: rerun the shard, or remove one of the two records`,
          { file: p.file },
        );
      }
      if (relation === 'completes') {
        add.push(rec);
        kept.set(rec.id, { rec, file: p.file });
      }
    }
    return add;
  });
  for (const add of fresh) store.append(add);
  return store.done.size;
}

/**
 * A shard's record file must be that shard's: its header carries the shard it was written by
 * (score and rerank add it), and a report naming another shard's file (copied under the wrong
 * name) would merge one shard's records twice and the other's not at all, while the count check
 * passes and the report claims every turn.
 */
function refuseOtherShardsFile(s: LoadedShard, which: keyof ShardBlock['files'], file: string, signature: Signature): void {
  const label = shardLabel(s.report.shard);
  if (signature.shard === undefined || signature.shard === label) return;
  throw new InputError(`this ${which} file was written by shard ${String(signature.shard)}, but the report ${s.file} is shard ${label}'s; give each shard its own file`, { file });
}

/**
 * A shard's per-turn (per-item) file must hold every turn its report counts: a file cut short (a
 * copy interrupted, a disk that filled) would give a merged file missing turns under a report
 * that claims them all. The references file may hold more (earlier runs) and is not counted.
 */
function refuseShortShard(s: LoadedShard, which: keyof ShardBlock['files'], file: string, records: number): void {
  if (which !== 'turns') return;
  const report = s.report as ShardReport & { dataset?: { turns?: unknown }; items?: unknown };
  const expected = typeof report.dataset?.turns === 'number' ? report.dataset.turns : Array.isArray(report.items) ? report.items.length : undefined;
  if (expected === undefined || records >= expected) return;
  throw new InputError(
    `shard ${shardLabel(s.report.shard)}: its turns file holds ${records} records and its report ${s.file} counts ${expected}; rerun that shard to complete it`,
    { file },
  );
}

function readRecords(file: string, kind: StoreKind): { signature: Signature; records: { id: string }[] } {
  const lines = readTextFile(file, `${kind} file`).split('\n').filter((l) => l.trim() !== '');
  const header = lines.length > 0 ? parseJsonText<{ kind?: string; signature?: Signature }>(lines[0], file) : undefined;
  if (!header || header.kind !== kind || typeof header.signature !== 'object') {
    throw new InputError(`expected a ${kind} file, found ${header?.kind ?? 'no header line'}`, { file });
  }
  const records = readRecordLines<{ id: string }>(lines.slice(1), file, {
    firstLine: 2,
    completedFields: COMPLETED_FIELDS[kind],
    onBadLine: (line) => {
      // A shard killed mid-write leaves a torn last line: rerun that shard, which repairs and finishes it.
      throw new InputError('unfinished or damaged record: rerun this shard to complete it', { file, where: `line ${line}` });
    },
  });
  return { signature: header.signature, records: [...records.values()] };
}

import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { InputError } from '../../util/errors.js';
import { repairJsonlTail } from '../../util/jsonl-append.js';
import { readRecordLines } from '../../util/record-lines.js';
import { formatSignature, normalizeSignature, sameConfiguration, signatureDifferences, signatureDigest, type Signature } from '../../util/signature.js';
import { inputLabel } from '../../util/input-label.js';
import path from 'node:path';

export type StoreKind = 'todeval-sgsacc-references' | 'todeval-sgsacc-turns' | 'todeval-rerank';

/**
 * Fields a later line of a store may fill in for an id already there (readRecordLines): a
 * references record is appended again once it gains its ground truth or hallucination premise
 * (src/metrics/sgsacc/run.ts, completeReferences). Per-turn and rerank records are written once.
 */
export const COMPLETED_FIELDS: Record<StoreKind, readonly string[]> = {
  'todeval-sgsacc-references': ['groundTruth', 'hallucination'],
  'todeval-sgsacc-turns': [],
  'todeval-rerank': [],
};

/** The store kind a header names, or undefined when it is not one of ours. */
export function storeKindOf(kind: unknown): StoreKind | undefined {
  return typeof kind === 'string' && kind in COMPLETED_FIELDS ? (kind as StoreKind) : undefined;
}

interface Header {
  kind: StoreKind;
  digest: string;
  signature: Signature;
}

/**
 * A JSONL file of per-turn records behind a signature header. It is how stored references are
 * reused across systems and how an interrupted run resumes: records already present are loaded
 * and only missing turns are computed and appended. A file written under another configuration is
 * refused rather than mixed.
 */
export interface RecordStoreOpenOptions {
  /**
   * A file of another configuration is started afresh instead of refused, and `replaced` says what
   * differed: for a file the tool keeps on its own (references kept beside --turns), whose records
   * are of no use to this configuration and which the user never named.
   */
  replaceOtherConfiguration?: boolean;
}

export class RecordStore<T extends { id: string }> {
  readonly done = new Map<string, T>();
  /** Set when a file of another configuration was started afresh (replaceOtherConfiguration): what differed. */
  replaced?: string;

  private constructor(
    readonly file: string,
    readonly signature: Signature,
  ) {}

  static open<T extends { id: string }>(file: string, kind: StoreKind, signature: Signature, opts: RecordStoreOpenOptions = {}): RecordStore<T> {
    const store = new RecordStore<T>(file, signature);
    const digest = signatureDigest(signature);
    const header: Header = { kind, digest, signature };
    const text = existsSync(file) ? repairJsonlTail(file, readFileSync(file, 'utf8'), (h) => typeof h.kind === 'string' && typeof h.digest === 'string') : '';
    if (text.trim() === '') {
      writeFileSync(file, JSON.stringify(header) + '\n');
      return store;
    }
    const lines = text.split('\n');
    let found: Header;
    try {
      found = JSON.parse(lines[0]) as Header;
    } catch {
      throw new InputError('not a todeval SGSAcc file (first line is not a JSON header)', { file });
    }
    if (typeof found !== 'object' || found === null || typeof found.kind !== 'string') {
      throw new InputError('not a todeval SGSAcc file (no header line); use another file, this one is left as it is', { file });
    }
    if (found.kind !== kind) {
      throw new InputError(`expected a ${kind} file, found ${String(found.kind)}`, { file });
    }
    if (found.digest !== digest && !sameAsStored(found.signature, signature)) {
      if (opts.replaceOtherConfiguration) {
        store.replaced = describeDifference(found.signature && normalizeSignature(found.signature), signature);
        writeFileSync(file, JSON.stringify(header) + '\n');
        return store;
      }
      throw new InputError(
        `written under a different configuration (${describeDifference(found.signature && normalizeSignature(found.signature), signature)}); ` +
          'use another file or delete this one',
        { file },
      );
    }
    // A torn write was already cut off above (its turns are recomputed): a bad line is real damage.
    const records = readRecordLines<T>(lines.slice(1), file, { firstLine: 2, completedFields: COMPLETED_FIELDS[kind] });
    for (const [id, rec] of records) store.done.set(id, rec);
    return store;
  }

  append(records: T[]): void {
    if (records.length === 0) return;
    appendFileSync(this.file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    for (const r of records) this.done.set(r.id, r);
  }
}

/**
 * A file whose header digest differs and still holds this configuration: written before the
 * signature keys were unified (old spellings), reached from another working directory (the same
 * input by another relative path: inputs compare by content), before inputs were named by content
 * (an old `data: sgd:/abs/dialogues.json` whose file is still there and has this content), or
 * before a user's own schema entered the signature.
 */
function sameAsStored(stored: Signature | undefined, wanted: Signature): boolean {
  if (typeof stored !== 'object' || stored === null) return false;
  const then = upgradeOldInputs(normalizeSignature(stored));
  const now = then.schema === undefined ? { ...wanted, schema: undefined } : wanted;
  return sameConfiguration(then, now);
}

/** `data` as written before inputs were named by content: a path as typed, labelled now if it still exists. */
function upgradeOldInputs(sig: Signature): Signature {
  const m = typeof sig.data === 'string' ? /^(sgd|multiwoz|generic):(.+)$/.exec(sig.data) : null;
  // Only a path: data-dir sources (`sgd:test`, `multiwoz:convlab_mwz21_test.json`) have no folder part.
  if (!m || /@[0-9a-f]{12}$/.test(m[2]) || !(path.isAbsolute(m[2]) || m[2].includes('/')) || !existsSync(m[2])) return sig;
  return { ...sig, data: `${m[1]}:${inputLabel(m[2])}` };
}

function describeDifference(stored: Signature | undefined, wanted: Signature): string {
  if (!stored) return 'no signature';
  const diffs = signatureDifferences(stored, wanted);
  return diffs.length > 0 ? diffs.join(', ') : formatSignature(stored);
}

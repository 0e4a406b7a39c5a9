import path from 'node:path';
import type { ConfidenceBlock } from '../../metrics/significance/confidence.js';
import type { OutcomeCounts } from '../../metrics/sgsacc/aggregate.js';
import type { ActionScore } from '../../metrics/sgsacc/types.js';
import { isStandinModelId } from '../../nli/onnx-builder/standins.js';
import { MODEL_SIGNATURE_KEYS } from '../../nli/types.js';
import { readRecordLines } from '../../util/record-lines.js';
import { checkRunReport } from '../../util/run-report-schema.js';
import { InputError } from '../../util/errors.js';
import { parseJsonText, readTextFile } from '../../util/json-file.js';
import { formatSignature, normalizeSignature, sameConfiguration, SYSTEM_KEYS, type Signature } from '../../util/signature.js';

/** One percentage with its denominator, as the score report keeps them per service and act. */
export interface GroupPct {
  validated: number | null;
  unvalidated: number | null;
  validatedN: number;
  unvalidatedN: number;
}

/** A run as the HTML report shows it, whichever command wrote it (score, or evaluate --sgsacc). */
export interface ReportRun {
  /** Short name: the system, else the file's base name; made unique across runs. */
  name: string;
  file: string;
  kind: 'score' | 'evaluate';
  signature: Signature;
  signatureText: string;
  /** The NLI model id behind the SGSAcc numbers (null when the run has none). */
  model: string | null;
  /** True when that model is a stand-in (random weights or the lexical stand-in): not SGSAcc. */
  standin: boolean;
  sgsacc: {
    validated: { all: number | null; seen: number | null; unseen: number | null } | null;
    unvalidated: { all: number | null; seen: number | null; unseen: number | null } | null;
    perService: Record<string, GroupPct>;
    perAct: Record<string, GroupPct>;
  } | null;
  counts: {
    turns?: number;
    evaluated?: number;
    excluded?: number;
    contextRescued?: number;
    /** Absent in reports written before the context-only control existed. */
    contextOnly?: number;
    outcomes?: OutcomeCounts;
  } | null;
  /** The run withdrew context-only rescues (`--context-control`). */
  contextControl: boolean;
  ser: { ser: number; errors: number; utterancesWithValues: number; erroneousTurns?: string[] } | null;
  bleu: number | null;
  inform: number | null;
  success: number | null;
  richness: Record<string, number> | null;
  /** The run's own intervals (`score`/`evaluate --confidence`), used when no per-item file is given. */
  confidence: ConfidenceBlock | null;
}

/** One line of a per-turn file (`score --turns`/`--out`), as the report reads it. */
export interface TurnLine {
  id: string;
  services: string[];
  validation: 'validated' | 'excluded' | 'unchecked';
  exclusionReasons?: string[];
  faithful: boolean | null;
  utterance?: string;
  previousUserUtterance?: string;
  /** The per-turn file holds TurnScore's actions; the report reads these fields of them. */
  actions: Pick<
    ActionScore,
    'act' | 'slot' | 'service' | 'reference' | 'entailed' | 'entailment' | 'plainEntailment' | 'contextEntailment' | 'contextUsed' | 'contextOnly' | 'status'
  >[];
  /** With `score --granularity sentence`: each sentence's offsets in `utterance` and its verdict. */
  sentences?: { unsupported: string[]; sentences: { text: string; start: number; end: number; verdict: string }[] };
}

export interface TurnsFile {
  file: string;
  signature: Signature;
  turns: TurnLine[];
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Reads a run report (score -o, or evaluate -o with --sgsacc and/or mwzeval metrics). */
export function loadRun(file: string): ReportRun {
  const doc = obj(parseJsonText(readTextFile(file, 'run report'), file));
  // Read in today's key spellings, so reports written before they were unified compare with new ones.
  const stored = obj(doc?.signature) as Signature | null;
  const signature = stored && normalizeSignature(stored);
  if (!doc || !signature) throw new InputError('not a todeval run report (no signature): pass the JSON written by score -o or evaluate -o', { file });
  checkRunReport(doc, signature.metric, file);
  const base = path.basename(file).replace(/\.json$/i, '');
  if (signature.metric === 'sgsacc') {
    const sg = obj(doc.sgsacc);
    const ser = obj(doc.ser);
    const model = typeof signature.model === 'string' ? signature.model : null;
    return {
      name: typeof doc.system === 'string' && doc.system ? String(doc.system) : base,
      file,
      kind: 'score',
      signature,
      signatureText: formatSignature(signature),
      model,
      standin: model !== null && isStandinModelId(model),
      sgsacc: sg ? readSgsacc(sg) : null,
      counts: obj(doc.counts) as ReportRun['counts'],
      contextControl: signature.contextControl === true,
      ser: ser ? (ser as unknown as ReportRun['ser']) : null,
      bleu: num(obj(doc.bleu)?.score),
      inform: null,
      success: null,
      richness: null,
      confidence: readConfidence(doc.confidence),
    };
  }
  if (signature.metric === 'mwz-evaluate') {
    const merged = obj(doc.sgsacc);
    const model = merged ? String(obj(merged.model)?.modelId ?? signature.model ?? '') || null : null;
    const bleu = obj(doc.bleu);
    const success = obj(doc.success);
    const richness = obj(doc.richness);
    return {
      name: base,
      file,
      kind: 'evaluate',
      signature,
      signatureText: formatSignature(signature),
      model,
      standin: model !== null && isStandinModelId(model),
      sgsacc: merged && obj(merged.sgsacc) ? readSgsacc(obj(merged.sgsacc)!) : null,
      counts: merged ? (obj(merged.counts) as ReportRun['counts']) : null,
      contextControl: signature.contextControl === true,
      ser: merged ? (obj(merged.ser) as unknown as ReportRun['ser']) : null,
      bleu: bleu ? num(Object.values(bleu).find((v) => typeof v === 'number')) : null,
      inform: num(obj(success?.inform)?.total),
      success: num(obj(success?.success)?.total),
      richness: richness ? (Object.fromEntries(Object.entries(richness).filter(([, v]) => typeof v === 'number')) as Record<string, number>) : null,
      confidence: readConfidence(doc.confidence),
    };
  }
  throw new InputError(`a ${String(signature.metric)} report cannot be shown: pass reports of todeval score or evaluate`, { file });
}

/** A report's `confidence` block, if it has one of the shape runConfidence writes. */
function readConfidence(v: unknown): ConfidenceBlock | null {
  const c = obj(v);
  return c && c.test === 'bootstrap' && typeof c.n === 'number' && obj(c.metrics) ? (c as unknown as ConfidenceBlock) : null;
}

function readSgsacc(sg: Json): NonNullable<ReportRun['sgsacc']> {
  return {
    validated: obj(sg.validated) as NonNullable<ReportRun['sgsacc']>['validated'],
    unvalidated: obj(sg.unvalidated) as NonNullable<ReportRun['sgsacc']>['unvalidated'],
    perService: (obj(sg.perService) ?? {}) as Record<string, GroupPct>,
    perAct: (obj(sg.perAct) ?? {}) as Record<string, GroupPct>,
  };
}

/** Reads a per-turn JSONL file: a signature header line, then one finished turn per line. */
export function loadTurns(file: string): TurnsFile {
  const lines = readTextFile(file, 'per-turn file').split('\n');
  const header = lines[0] ? obj(safeParse(lines[0])) : null;
  const stored = obj(header?.signature) as Signature | null;
  const signature = stored && normalizeSignature(stored);
  if (!header || header.kind !== 'todeval-sgsacc-turns' || !signature) {
    throw new InputError('not a per-turn file of todeval score (its first line must be the todeval-sgsacc-turns header)', { file });
  }
  // A torn last line (an interrupted run) is what resuming recomputes: skipped here too. Only one
  // that is not JSON is torn: a last line that parses but is no turn record (`{}` appended by hand)
  // is refused, as compare refuses it (item-files.ts), so both commands accept the same files.
  const records = readRecordLines<TurnLine & { id: string }>(lines.slice(1), file, {
    firstLine: 2,
    onBadLine: (line, isLast, parsed) => {
      if (isLast && !parsed) return 'skip';
      throw new InputError(`line ${line} is not a turn record`, { file });
    },
  });
  const turns: TurnLine[] = [];
  for (const t of records.values()) {
    if (!Array.isArray((t as { actions?: unknown }).actions)) throw new InputError(`turn ${t.id} is not a turn record (no actions)`, { file });
    turns.push(t);
  }
  return { file, signature, turns };
}

function safeParse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * Signature fields a per-turn file shares with the run report it belongs to: its references' fields
 * (the model's whole identity and the user's own schema included), the result's options and what
 * names the system. Every one that decides the numbers: two runs of one system that differ only in
 * one left out here (another --schema, --hallucination, a q8-row2 run on another CPU class) would
 * otherwise each match the other's per-turn file, and the report would show one run's turns and
 * statistics under the other.
 */
const SHARED_KEYS = [
  ...MODEL_SIGNATURE_KEYS,
  'rules',
  'dataset',
  'data',
  'schema',
  'validation',
  'context',
  'referenceSelection',
  'contextControl',
  'hallucination',
  'granularity',
  ...SYSTEM_KEYS['score-turns'],
];
const sharedFields = (sig: Signature) => Object.fromEntries(SHARED_KEYS.map((k) => [k, sig[k]])) as Signature;

/**
 * Which run each per-turn file belongs to: the one report whose signature agrees on every shared
 * field. Refused (one line) when none or several match, rather than showing turns under the wrong run.
 */
export function matchTurnsToRuns(runs: ReportRun[], files: TurnsFile[]): Map<number, TurnsFile> {
  const out = new Map<number, TurnsFile>();
  for (const tf of files) {
    const matches = runs
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.kind === 'score' && sameConfiguration(sharedFields(r.signature), sharedFields(tf.signature)));
    if (matches.length === 0) throw new InputError('matches no run given: its signature differs from every run report', { file: tf.file });
    const free = matches.filter(({ i }) => !out.has(i));
    if (free.length === 0) throw new InputError(`is the second per-turn file for run ${matches[0].r.file}`, { file: tf.file });
    out.set(free[0].i, tf);
  }
  return out;
}

/** Gives runs with the same name a numeric suffix so table rows, chart series and filters stay apart. */
export function uniqueNames(runs: ReportRun[]): void {
  const seen = new Map<string, number>();
  for (const r of runs) {
    const n = (seen.get(r.name) ?? 0) + 1;
    seen.set(r.name, n);
    if (n > 1) r.name = `${r.name} (${n})`;
  }
}

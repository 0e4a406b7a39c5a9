/**
 * The runs' per-item outputs, read as per-item sufficient statistics for `todeval compare` and
 * `todeval report`: score's per-turn files, rerank's per-item files, evaluate's `--items` file,
 * gcdf1's `--per-dialogue` file, and mwzeval-format predictions (evaluated here). Each source says
 * which signature keys name the system (they may differ between compared runs; the others may not).
 */
import path from 'node:path';
import { gcdf1ItemStats, type Gcdf1DialogueScores } from '../../metrics/gcdf1/item-stats.js';
import { chrfOptionsOf, type Evaluator, type EvaluatorOptions } from '../../metrics/mwz/evaluator.js';
import { mwzItemStats } from '../../metrics/mwz/item-stats.js';
import { checkRepeatedDialogues } from '../../metrics/mwz/input.js';
import { turnItemStats } from '../../metrics/sgsacc/item-stats.js';
import type { TurnScore } from '../../metrics/sgsacc/types.js';
import { metricItems, ratioMetric, type ItemLevel, type MetricItems, type RunItems } from '../../metrics/significance/items.js';
import type { MetricSpec, StatMetric } from '../../metrics/significance/types.js';
import { bleuStatMetric } from '../../metrics/text/bleu-significance.js';
import type { BleuTokenizerName } from '../../metrics/text/bleu-tokenizers.js';
import { chrfStatMetric } from '../../metrics/text/chrf.js';
import { terStatMetric } from '../../metrics/text/ter.js';
import { rerankItemStats } from '../../rerank/item-stats.js';
import type { RerankResult } from '../../rerank/rerank.js';
import { COMPLETED_FIELDS, type StoreKind } from '../../metrics/sgsacc/store.js';
import { InputError } from '../../util/errors.js';
import { readRecordLines } from '../../util/record-lines.js';
import { parseJsonText, readTextFile } from '../../util/json-file.js';
import { extendSignature, fileSignature, normalizeSignature, type Signature } from '../../util/signature.js';

export type ItemSourceKind = 'score-turns' | 'rerank' | 'evaluate-items' | 'mwz-predictions' | 'gcdf1';

export interface ItemSource {
  file: string;
  kind: ItemSourceKind;
  /** The system's name in tables: score's `system`, else the file's base name. */
  name: string;
  signature: Signature;
  items: RunItems;
}

/** The `--items` file evaluate writes: every metric's rows with what rebuilds its score. */
export interface ItemsFile {
  kind: 'todeval-items';
  signature: Signature;
  metrics: Record<string, { name: string; spec: MetricSpec; level: ItemLevel; ids: string[]; dialogues: string[] | null; rows: number[][] }>;
}

export function itemsFileJson(signature: Signature, items: RunItems): ItemsFile {
  const metrics: ItemsFile['metrics'] = {};
  for (const [id, m] of Object.entries(items)) {
    if (!m.metric.spec) throw new Error(`${m.metric.name}: no spec to store it by`);
    const w = m.metric.width;
    metrics[id] = {
      name: m.metric.name,
      spec: m.metric.spec,
      level: m.level,
      ids: m.ids,
      dialogues: m.dialogues,
      rows: m.ids.map((_, i) => Array.from(m.stats.subarray(i * w, (i + 1) * w))),
    };
  }
  return { kind: 'todeval-items', signature, metrics };
}

function metricFromSpec(name: string, spec: MetricSpec, file: string): StatMetric {
  if (spec?.type === 'ratio') return ratioMetric(name, { scale: spec.scale, epsilon: spec.epsilon });
  if (spec?.type === 'bleu') return { ...bleuStatMetric({ ...spec.options, tokenize: spec.options.tokenize as BleuTokenizerName | undefined, smoothMethod: spec.options.smoothMethod as never }), name };
  if (spec?.type === 'chrf') return { ...chrfStatMetric(spec.options), name };
  if (spec?.type === 'ter') return { ...terStatMetric(), name };
  throw new InputError(`metric ${name}: unknown score type ${JSON.stringify(spec)}`, { file });
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);

/** A JSONL store: its header, then its records by id, read as every store is (readRecordLines: a conflicting duplicate is refused). */
function readStore(file: string, text: string): { header: Json; records: Json[] } | null {
  const lines = text.split('\n');
  let header: Json | null = null;
  try {
    header = obj(JSON.parse(lines[0]));
  } catch {
    return null;
  }
  // The stores' header kinds (RecordStore); anything else is one JSON document.
  if (!header || !obj(header.signature) || !(header.kind === 'todeval-sgsacc-turns' || header.kind === 'todeval-rerank' || header.kind === 'todeval-sgsacc-references')) return null;
  const byId = readRecordLines<Json & { id: string }>(lines.slice(1), file, {
    firstLine: 2,
    completedFields: COMPLETED_FIELDS[header.kind as StoreKind],
    onBadLine: (line, isLast, parsed) => {
      // A torn last line is what an interrupted run leaves (and resuming recomputes).
      if (isLast && !parsed) return 'skip';
      throw new InputError('not a record', { file, where: `line ${line}` });
    },
  });
  return { header, records: [...byId.values()] };
}

/** A file's name without its extension and the suffixes todeval's outputs are given (a.turns.jsonl -> a). */
const baseName = (file: string) => path.basename(file).replace(/\.(jsonl?|json)$/i, '').replace(/\.(items|turns|per-dialogue|dialogues)$/i, '');

/**
 * A per-turn file of `score --turns` already read (its header's signature and its lines): the
 * turns' statistics. A turn written twice (a resumed run) counts once, as its last line says.
 */
export function scoreTurnsItemSource(file: string, signature: Signature, lines: readonly TurnScore[]): ItemSource {
  const byId = new Map(lines.map((t) => [t.id, t]));
  return {
    file,
    kind: 'score-turns',
    name: typeof signature.system === 'string' && signature.system ? signature.system : baseName(file),
    signature,
    items: turnItemStats([...byId.values()], { validation: signature.validation !== false }),
  };
}

export interface LoadItemsOptions {
  /** How mwzeval-format predictions are evaluated (one Evaluator: its ground truth is loaded once). */
  evaluator?: () => Evaluator;
  /** sacreBLEU's chrF and TER of mwzeval predictions too (over BLEU's strings; they are not computed by default). */
  textMetrics?: Pick<EvaluatorOptions, 'chrf' | 'ter'>;
}

/** The evaluation options `compare` passes for mwzeval predictions (evaluate's own flags). */
export type MwzEvaluatorOptions = Pick<EvaluatorOptions, 'dataDir' | 'dataDirSource' | 'groundTruth' | 'strict' | 'skipInvalid' | 'domainsFromSlots' | 'onWarning' | 'onSkipped'>;

/** Reads one run's per-item output as sufficient statistics, or says in one line what it is instead. */
export function loadItemSource(file: string, opts: LoadItemsOptions = {}): ItemSource {
  const text = readTextFile(file, 'run');
  const store = readStore(file, text);
  if (store) {
    const signature = normalizeSignature(store.header.signature as Signature);
    if (store.header.kind === 'todeval-sgsacc-turns') return scoreTurnsItemSource(file, signature, store.records as unknown as TurnScore[]);
    if (store.header.kind === 'todeval-rerank') {
      return { file, kind: 'rerank', name: baseName(file), signature, items: rerankItemStats(store.records as unknown as RerankResult[]) };
    }
    throw new InputError(`a ${String(store.header.kind)} file holds no system's results: pass score's --turns file, rerank's --turns file, evaluate's --items file, gcdf1's --per-dialogue file or mwzeval predictions`, { file });
  }
  const doc = parseJsonText<unknown>(text, file);
  const o = obj(doc);
  if (!o) throw new InputError('not a per-item output of todeval (nor mwzeval predictions)', { file });
  if (o.kind === 'todeval-items' && obj(o.signature) && obj(o.metrics)) {
    const f = o as unknown as ItemsFile;
    const items: RunItems = {};
    for (const [id, m] of Object.entries(f.metrics)) {
      const metric = metricFromSpec(m.name, m.spec, file);
      items[id] = metricItems(metric, m.level, m.ids, m.dialogues, m.rows);
    }
    return { file, kind: 'evaluate-items', name: baseName(file), signature: normalizeSignature(f.signature), items };
  }
  // gcdf1 -o keeps its signature under `metadata` (the reference's output shape).
  const sig = (obj(o.signature) ?? obj(obj(o.metadata)?.signature)) as Signature | null;
  if (sig && sig.metric === 'gcdf1' && obj(o.dialogues)) {
    return { file, kind: 'gcdf1', name: baseName(file), signature: normalizeSignature(sig), items: gcdf1ItemStats(o.dialogues as Gcdf1DialogueScores) };
  }
  if (sig) {
    const per = sig.metric === 'sgsacc' ? "score's --turns file" : sig.metric === 'mwz-evaluate' ? "evaluate's --items file (or the predictions)" : sig.metric === 'gcdf1' ? "gcdf1's --per-dialogue file" : "the run's per-item output";
    throw new InputError(`a run report holds no per-item statistics: pass ${per}`, { file });
  }
  if (Object.values(o).length > 0 && Object.values(o).every((v) => Array.isArray(v))) {
    if (!opts.evaluator) throw new InputError('mwzeval predictions need the MultiWOZ data to be evaluated', { file });
    checkRepeatedDialogues(text, file);
    const evaluator = opts.evaluator();
    const validated = evaluator.validate(o, file);
    const allStates = Object.values(validated.dialogues).every((d) => d.every((t) => t.state !== undefined));
    // The metrics evaluate computes by default, and JGA when every turn has a state.
    const { chrf, ter } = opts.textMetrics ?? {};
    const ev = evaluator.withMetrics({ bleu: true, success: true, richness: false, dst: allStates, chrf, ter });
    const result = ev.evaluateValidated(validated, file, { items: true });
    // Named as evaluate --items names them: relative to the data directory when they lie in it.
    const signature = extendSignature(result.signature, { predictions: fileSignature(file, evaluator.opts.dataDir) });
    return { file, kind: 'mwz-predictions', name: baseName(file), signature, items: mwzItemStats(result.items!, { chrf: chrfOptionsOf(chrf) }) };
  }
  throw new InputError('not a per-item output of todeval (nor mwzeval predictions)', { file });
}

/** Every metric's items of a run, restricted to the metric ids asked for. */
export function pickMetrics(items: RunItems, ids?: readonly string[]): [string, MetricItems][] {
  return Object.entries(items).filter(([id]) => !ids || ids.includes(id));
}

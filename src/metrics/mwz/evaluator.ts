import { BleuReferences, bleuFromSegmentStats, BLEU_STATS_WIDTH, type BleuResult } from '../text/bleu.js';
import { ChrfReferences, chrfFromSegmentStats, type ChrfOptions, type ChrfResult } from '../text/chrf.js';
import { TerReferences, terFromSegmentStats, TER_STATS_WIDTH, type TerResult } from '../text/ter.js';
import { lexicalRichness, type LexicalRichness } from '../text/richness.js';
import { normalizeResponse, type NormalizedResponse } from '../text/normalize-response.js';
import type { Signature } from '../../util/signature.js';
import { mwzSignature } from './signature.js';
import { InputError } from '../../util/errors.js';
import { ReadDigests } from '../../util/input-label.js';
import type { FileRead } from '../../util/json-file.js';
import { domainsFromSlotNames, estimateActiveDomains } from './active-domains.js';
import { MwzDatabase } from './database.js';
import { dstScoresOfTurns, dstTurn, type DstScores } from './dst.js';
import type { MwzItems } from './item-stats.js';
import {
  loadBookedDomains,
  groundTruthLabel,
  groundTruthLabelInputs,
  loadGroundTruth,
  resolveSource,
  type GroundTruth,
  type GroundTruthSource,
} from './ground-truth.js';
import { validatePredictions, type UnknownStateSlot, type ValidatedPredictions } from './input.js';
import { normalizeState, type BeliefState } from './normalize-state.js';
import { lexicalizedWarning, unknownPlaceholdersWarning } from './response-warnings.js';
import { aggregateSuccess, dialogueSuccess, OPTIMISTIC, STANDARD, type SuccessRates } from './success.js';

export interface EvaluatorOptions {
  bleu?: boolean;
  success?: boolean;
  richness?: boolean;
  dst?: boolean;
  /**
   * sacreBLEU's chrF over the strings BLEU scores (not an mwzeval metric): true for its defaults
   * (chrF2), or its options (`{ wordOrder: 2 }`: chrF++).
   */
  chrf?: boolean | ChrfOptions;
  /** sacreBLEU's TER (its defaults) over the strings BLEU scores (not an mwzeval metric). */
  ter?: boolean;
  /** Directory holding `multiwoz/` (see DATA.md). */
  dataDir: string;
  /** How the data dir was found (flag, env, local, shared), for the signature. */
  dataDirSource?: string;
  /** Ground-truth source; default: MultiWOZ 2.2 files when present, else the ConvLab 2.1 file. */
  groundTruth?: GroundTruthSource;
  /** Unknown slot placeholders are errors instead of warnings. */
  strict?: boolean;
  /** Leave out invalid dialogues (listed in `invalid`) instead of stopping at the first. */
  skipInvalid?: boolean;
  noCache?: boolean;
  /**
   * Take each turn's active domains from the domain names in its placeholders (mwzeval's
   * add_slot_domains.py), replacing any given `active_domains`.
   */
  domainsFromSlots?: boolean;
  onWarning?: (message: string) => void;
  /** Each dialogue skipped under skipInvalid; default: an onWarning line `skipped: ...`. */
  onSkipped?: (error: InputError) => void;
}

export interface SuccessReport extends SuccessRates {
  /** The paper's optimistic setting: intersection matching, name/id-only search, gold domains. */
  optimistic: SuccessRates;
  state_source: 'predicted' | 'gold';
  domain_source: 'predicted' | 'estimated-from-state' | 'slot-names';
}

export interface MwzEvaluation {
  /** Reference set name -> corpus BLEU (sacreBLEU defaults). */
  bleu: Record<string, number> | null;
  success: SuccessReport | null;
  richness: LexicalRichness | null;
  dst: DstScores | null;
  /**
   * Not mwzeval's (asked for only): reference set name -> sacreBLEU's corpus chrF (chrF2 by
   * default) and TER over exactly the hypothesis and reference strings of `bleu`.
   */
  chrf?: Record<string, number>;
  ter?: Record<string, number>;
  details: {
    dialogues: number;
    turns: number;
    bleu?: Omit<BleuResult, 'signature'> & { signature: string };
    /** chrF's name (chrF2, chrF2++), score, summed statistics and sacreBLEU signature. */
    chrf?: ChrfResult;
    /** TER's score, summed edits and reference length, and sacreBLEU signature. */
    ter?: TerResult;
    unknown_placeholders: { where: string; placeholders: string[] }[];
    /** State slots MultiWOZ does not have: `domain.slot` -> values seen under it. */
    unknown_state_slots: Record<string, number>;
    invalid: string[];
    ground_truth_cache?: string;
  };
  signature: Signature;
}

/** Name of the reference set in `bleu`, as mwzeval names its MultiWOZ 2.2 references `mwz22`. */
export function referenceSetName(source: GroundTruthSource): string {
  return source === 'multiwoz22' ? 'mwz22' : 'mwz21';
}

/**
 * mwzeval's Evaluator: BLEU, Inform & Success (standard and optimistic), lexical richness and DST
 * on predictions in mwzeval's input format. Ground truth, database and booked domains are loaded
 * once per instance and reused across `evaluate` calls (e.g. once per training epoch).
 */
/** The hypotheses and references mwzeval's BLEU scores, one per turn in dialogue order. */
interface ResponseStrings {
  hyps: string[];
  refs: string[];
  /** `refs` as BLEU's default preprocessing leaves them (kept with the ground truth, so not tokenized again). */
  refs13a: string[];
}

/** Each turn's row of per-segment statistics (rows in responseStrings' order) into its dialogue's items. */
function storeTurnRows(items: MwzItems | undefined, key: 'bleu' | 'chrf' | 'ter', responses: Record<string, string[]>, stats: Float64Array | Int32Array, width: number): void {
  if (!items) return;
  let row = 0;
  for (const [id, rs] of Object.entries(responses)) items[id][key] = rs.map(() => Array.from(stats.subarray(row * width, ++row * width)));
}

export class Evaluator {
  readonly opts: EvaluatorOptions;
  private gt?: GroundTruth & { cacheFile?: string };
  private db?: MwzDatabase;
  private booked?: Record<string, string[][]>;
  /** The signed data files, hashed as the loaders above read them (see data()). */
  private reads?: ReadDigests;

  constructor(opts: EvaluatorOptions) {
    this.opts = opts;
  }

  /** The same evaluator computing other metrics, sharing the data it has loaded. */
  withMetrics(metrics: Pick<EvaluatorOptions, 'bleu' | 'success' | 'richness' | 'dst' | 'chrf' | 'ter'>): Evaluator {
    const e = new Evaluator({ ...this.opts, ...metrics });
    e.reads = this.reads;
    e.gt = this.groundTruth();
    if (metrics.success) {
      e.db = this.database();
      e.booked = this.bookedDomains();
    }
    return e;
  }

  groundTruth(): GroundTruth & { cacheFile?: string } {
    this.gt ??= loadGroundTruth(this.opts.dataDir, { source: this.opts.groundTruth, noCache: this.opts.noCache, read: this.dataReads() });
    return this.gt;
  }

  private database(): MwzDatabase {
    this.db ??= MwzDatabase.load(this.opts.dataDir, this.dataReads());
    return this.db;
  }

  private bookedDomains(): Record<string, string[][]> {
    this.booked ??= loadBookedDomains(this.opts.dataDir, this.dataReads());
    return this.booked;
  }

  /**
   * How the loaders read the data files the signature names by content (groundTruthLabel): each is
   * hashed as it is parsed instead of read again to sign it. Data it cannot list (a missing file)
   * is left to the loaders, which name it as before.
   */
  private dataReads(): FileRead {
    if (!this.reads) {
      let inputs: string[] = [];
      try {
        inputs = groundTruthLabelInputs(this.opts.dataDir, resolveSource(this.opts.dataDir, this.opts.groundTruth));
      } catch {
        // the loader that needs the missing file says which
      }
      this.reads = new ReadDigests(inputs);
    }
    return this.reads.read;
  }

  /**
   * Check predictions (already parsed JSON) against the test set's dialogues and turn counts;
   * what skipInvalid leaves out goes to onSkipped. `file` only labels error messages.
   */
  validate(input: unknown, file?: string): ValidatedPredictions {
    const expectedTurns = Object.fromEntries(Object.entries(this.groundTruth().dialogues).map(([k, v]) => [k, v.references.length]));
    const validated = validatePredictions(input, { file, expectedTurns, skipInvalid: this.opts.skipInvalid, strict: this.opts.strict });
    for (const e of validated.invalid) {
      if (this.opts.onSkipped) this.opts.onSkipped(e);
      else this.opts.onWarning?.(`skipped: ${e.oneLine()}`);
    }
    const unknown = validated.unknownSlots;
    if (unknown.length > 0) {
      // One line for the lot: a system that predicts a slot MultiWOZ lacks does so in every dialogue.
      const kinds = [...new Set(unknown.map((u) => `${u.domain}.${u.slot}`))];
      const shown = kinds.slice(0, 5).join(', ') + (kinds.length > 5 ? `, ... (${kinds.length} kinds)` : '');
      this.opts.onWarning?.(
        `${file ? `${file}: ` : ''}${unknown.length} state slot value(s) under slots MultiWOZ does not have (${shown}; first at ${unknown[0].where}); ` +
          'they never match the ground truth (--strict makes them errors)',
      );
    }
    return validated;
  }

  /** Evaluate predictions (already parsed JSON); `file` only labels error messages. */
  evaluate(input: unknown, file?: string): MwzEvaluation {
    return this.evaluateValidated(this.validate(input, file), file);
  }

  /**
   * Evaluate what `validate` accepted (callers that also need the validated dialogues, e.g. --sgsacc).
   * With `items`, also each dialogue's sufficient statistics (what paired tests and intervals
   * resample: docs/significance.md), outside the mwzeval-shaped result.
   */
  evaluateValidated({ dialogues, invalid, unknownSlots }: ValidatedPredictions, file?: string, opts: { items?: boolean } = {}): MwzEvaluation & { items?: MwzItems } {
    const { bleu, success, richness, dst, chrf, ter } = this.opts;
    const gt = this.groundTruth();
    const input = this.normalizeInput(dialogues, file);
    const items: MwzItems | undefined = opts.items ? Object.fromEntries(Object.keys(dialogues).map((id) => [id, {}])) : undefined;
    const result: MwzEvaluation & { items?: MwzItems } = {
      bleu: null,
      success: null,
      richness: null,
      dst: null,
      details: {
        dialogues: Object.keys(dialogues).length,
        turns: input.turns,
        unknown_placeholders: input.unknown,
        unknown_state_slots: countSlots(unknownSlots),
        invalid: invalid.map((e) => e.oneLine()),
        ground_truth_cache: gt.cacheFile,
      },
      // Filled in once the metrics are computed (below); declared here so it keeps its place in the JSON.
      signature: undefined as unknown as Signature,
    };
    // mwzeval's BLEU strings, which chrF and TER score too: built once for all three.
    const strings = bleu || chrf || ter ? this.responseStrings(input.responses) : undefined;
    if (bleu) {
      const b = this.scoreBleu(strings!, input, items);
      result.bleu = { [referenceSetName(gt.source)]: b.score };
      result.details.bleu = b;
    }
    if (chrf || ter) {
      const text = this.scoreChrfTer(strings!, input, items);
      // Beside mwzeval's keys, never among them: its output stays as it is.
      if (text.chrf) {
        result.chrf = { [referenceSetName(gt.source)]: text.chrf.score };
        result.details.chrf = text.chrf;
      }
      if (text.ter) {
        result.ter = { [referenceSetName(gt.source)]: text.ter.score };
        result.details.ter = text.ter;
      }
    }
    if (success) result.success = this.scoreSuccess(dialogues, input, items);
    if (richness) result.richness = lexicalRichness(Object.values(input.responses).flat());
    if (dst) result.dst = this.scoreDst(input, items);
    // The signed data: the files the loaders read are hashed already, the others are read now.
    this.reads?.finish();
    result.signature = mwzSignature({
      data: groundTruthLabel(this.opts.dataDir, gt.source),
      bleu: result.details.bleu?.signature,
      chrf: result.details.chrf,
      ter: result.details.ter?.signature,
      success,
      dst,
      stateSource: result.success?.state_source,
      domainSource: result.success?.domain_source,
      dataDir: this.opts.dataDirSource,
      dialogues: result.details.dialogues,
      skipped: invalid.length,
    });
    if (items) result.items = items;
    return result;
  }

  /**
   * Responses (and states) normalized once, like mwzeval's normalize_data; unknown placeholders
   * dropped (or, under `strict`, an error), with one warning line each for them and for
   * lexicalized responses however many turns have them.
   */
  private normalizeInput(dialogues: ValidatedPredictions['dialogues'], file?: string): NormalizedInput {
    const gt = this.groundTruth();
    const unknown: NormalizedInput['unknown'] = [];
    const responses: Record<string, string[]> = {};
    const states: Record<string, BeliefState[]> = {};
    let allStates = true;
    let allDomains = true;
    let turns = 0;
    const normalize = responseNormalizer();
    for (const [id, dial] of Object.entries(dialogues)) {
      responses[id] = dial.map((t, i) => {
        const n = normalize(t.response);
        if (n.unknownPlaceholders.length > 0) {
          const where = `${id}/turn ${i}`;
          const list = [...new Set(n.unknownPlaceholders)];
          const problem = `unknown slot placeholder(s) ${list.map((p) => `[${p}]`).join(', ')}`;
          if (this.opts.strict) throw new InputError(problem, { file, where });
          unknown.push({ where, placeholders: list });
        }
        return n.text;
      });
      states[id] = dial.map((t) => (t.state ? normalizeState(t.state) : {}));
      if (dial.some((t) => t.state === undefined)) allStates = false;
      if (this.opts.domainsFromSlots) {
        for (const t of dial) t.active_domains = domainsFromSlotNames(t.response);
      }
      if (dial.some((t) => t.active_domains === undefined)) allDomains = false;
      turns += dial.length;
    }
    const warn = this.opts.onWarning ?? (() => undefined);
    const prefix = file ? `${file}: ` : '';
    const dropped = unknownPlaceholdersWarning(unknown);
    if (dropped) warn(prefix + dropped);
    const { bleu, success, richness, chrf, ter } = this.opts;
    const lexicalized = lexicalizedWarning(
      Object.entries(dialogues).flatMap(([id, dial]) => dial.map((t, i) => ({ response: t.response, reference: gt.dialogues[id].references[i] }))),
      { bleu, success, richness, chrf: Boolean(chrf), ter },
    );
    if (lexicalized) warn(prefix + lexicalized);
    return { responses, states, allStates, allDomains, turns, unknown };
  }

  /**
   * The strings mwzeval's BLEU scores (and chrF and TER with it): every turn's normalized response
   * and its normalized reference, dialogue by dialogue in input order (one reference stream).
   */
  bleuStrings(predictions: ValidatedPredictions): ResponseStrings {
    const normalize = responseNormalizer();
    const responses = Object.fromEntries(Object.entries(predictions.dialogues).map(([id, dial]) => [id, dial.map((t) => normalize(t.response).text)]));
    return this.responseStrings(responses);
  }

  private responseStrings(responses: Record<string, string[]>): ResponseStrings {
    const gt = this.groundTruth();
    const hyps: string[] = [];
    const refs: string[] = [];
    const refs13a: string[] = [];
    for (const [id, rs] of Object.entries(responses)) {
      const { scored } = gt.dialogues[id];
      rs.forEach((h, i) => {
        hyps.push(h);
        refs.push(scored.text[i]);
        refs13a.push(scored.tokens13a[i]);
      });
    }
    return { hyps, refs, refs13a };
  }

  /** Corpus BLEU (sacreBLEU's defaults) over bleuStrings; with `items`, each turn's segment statistics. */
  private scoreBleu({ hyps, refs13a }: ResponseStrings, input: NormalizedInput, items?: MwzItems): NonNullable<MwzEvaluation['details']['bleu']> {
    const references = groundTruthBleuReferences(this.groundTruth(), input.responses, refs13a);
    const stats = references.segmentStats(hyps);
    storeTurnRows(items, 'bleu', input.responses, stats, BLEU_STATS_WIDTH);
    return bleuFromSegmentStats(stats, {}, references.signature);
  }

  /**
   * sacreBLEU's corpus chrF and TER (the options asked for, else its defaults) over the strings
   * BLEU scores; with `items`, each turn's statistics (summed per corpus, as sacreBLEU does).
   */
  private scoreChrfTer({ hyps, refs }: ResponseStrings, input: NormalizedInput, items?: MwzItems): { chrf?: ChrfResult; ter?: TerResult } {
    const out: { chrf?: ChrfResult; ter?: TerResult } = {};
    if (this.opts.chrf) {
      const options = chrfOptionsOf(this.opts.chrf);
      const references = new ChrfReferences([refs], options);
      const stats = references.segmentStats(hyps);
      storeTurnRows(items, 'chrf', input.responses, stats, references.width);
      out.chrf = chrfFromSegmentStats(stats, options, references.signature);
    }
    if (this.opts.ter) {
      const references = new TerReferences([refs]);
      const stats = references.segmentStats(hyps);
      storeTurnRows(items, 'ter', input.responses, stats, TER_STATS_WIDTH);
      out.ter = terFromSegmentStats(stats, references.signature);
    }
    return out;
  }

  /**
   * Inform and Success, standard (the reported `total`, and the per-dialogue items) and optimistic
   * (intersection matching, name/id-only search, gold domains). States are the predicted ones
   * when every turn has one, else the gold ones; domains the predicted, else estimated from states.
   */
  private scoreSuccess(dialogues: ValidatedPredictions['dialogues'], input: NormalizedInput, items?: MwzItems): SuccessReport {
    const gt = this.groundTruth();
    const states = (id: string): BeliefState[] => (input.allStates ? input.states[id] : gt.dialogues[id].states);
    const run = (optimistic: boolean): SuccessRates => {
      const outcomes = Object.entries(dialogues).map(([id, dial]) => {
        const st = states(id);
        const activeDomains = optimistic
          ? gt.dialogues[id].goldDomains
          : input.allDomains
            ? dial.map((t) => t.active_domains!)
            : estimateActiveDomains(st);
        const outcome = dialogueSuccess(
          gt.dialogues[id].goal,
          { responses: input.responses[id], states: st, activeDomains, bookedDomains: this.bookedDomains()[id] ?? [] },
          this.database(),
          optimistic ? OPTIMISTIC : STANDARD,
        );
        // The reported Inform and Success are the standard setting's `total`.
        if (items && !optimistic) {
          items[id].inform = outcome.match.total === true;
          items[id].success = outcome.success.total === true;
        }
        return outcome;
      });
      return aggregateSuccess(outcomes);
    };
    return {
      ...run(false),
      optimistic: run(true),
      state_source: input.allStates ? 'predicted' : 'gold',
      domain_source: this.opts.domainsFromSlots ? 'slot-names' : input.allDomains ? 'predicted' : 'estimated-from-state',
    };
  }

  /** Joint accuracy and slot scores; null (with a warning) unless every turn predicts a state. */
  private scoreDst(input: NormalizedInput, items?: MwzItems): DstScores | null {
    const gt = this.groundTruth();
    if (!input.allStates) {
      // mwzeval prints an error and reports zeros; a null score cannot be mistaken for a result
      this.opts.onWarning?.('dst: skipped, not every turn has a "state" prediction');
      return null;
    }
    // Each turn compared once, for the items and the scores.
    const turns = Object.entries(input.states).map(([id, states]) => {
      const outcomes = states.map((hyp, i) => dstTurn(hyp, gt.dialogues[id].states[i]));
      if (items) items[id].jointCorrect = outcomes.map((o) => o.jointCorrect);
      return outcomes;
    });
    return dstScoresOfTurns(turns.flat());
  }
}

/**
 * The last BleuReferences built over each ground truth, by the dialogues (and turn counts) they
 * cover in order: compare evaluates the baseline and each system against the same references, and
 * `todeval stdio` keeps one ground truth for every call, so the reference n-gram tables (a fifth of
 * an evaluation's CPU) are built once for them. The ground truth's references are fixed once loaded,
 * so the dialogue list names the reference strings; one entry per ground truth, so nothing grows.
 */
const bleuReferencesByGroundTruth = new WeakMap<GroundTruth, { key: string; references: BleuReferences }>();

function groundTruthBleuReferences(gt: GroundTruth, responses: Record<string, string[]>, refs13a: string[]): BleuReferences {
  const key = Object.entries(responses)
    .map(([id, rs]) => `${id}:${rs.length}`)
    .join(',');
  const held = bleuReferencesByGroundTruth.get(gt);
  if (held?.key === key) return held.references;
  const references = BleuReferences.preprocessed([refs13a]);
  bleuReferencesByGroundTruth.set(gt, { key, references });
  return references;
}

/** The input as every metric reads it: normalized once. */
interface NormalizedInput {
  /** Dialogue id -> each turn's normalized response (unknown placeholders dropped). */
  responses: Record<string, string[]>;
  /** Dialogue id -> each turn's normalized predicted state ({} where none was given). */
  states: Record<string, BeliefState[]>;
  allStates: boolean;
  allDomains: boolean;
  turns: number;
  unknown: { where: string; placeholders: string[] }[];
}

/**
 * normalizeResponse (a pure function) computed once per distinct response of one evaluation:
 * systems repeat their delexicalized responses (DAMD's 7,354 turns have 1,416 distinct ones, LAVA's
 * 7,372 have 158), and Moses both ways is most of what normalizing costs. Per call, so nothing grows.
 */
function responseNormalizer(): (response: string) => NormalizedResponse {
  const seen = new Map<string, NormalizedResponse>();
  return (response) => {
    let n = seen.get(response);
    if (n === undefined) {
      n = normalizeResponse(response);
      seen.set(response, n);
    }
    return n;
  };
}

/** EvaluatorOptions.chrf as chrF's options: true is sacreBLEU's defaults. */
export function chrfOptionsOf(chrf: boolean | ChrfOptions | undefined): ChrfOptions {
  return typeof chrf === 'object' ? chrf : {};
}

function countSlots(slots: UnknownStateSlot[] = []): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const u of slots) counts[`${u.domain}.${u.slot}`] = (counts[`${u.domain}.${u.slot}`] ?? 0) + 1;
  return counts;
}

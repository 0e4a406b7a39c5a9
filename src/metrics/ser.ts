import type { DialogueAction, Turn } from '../adapters/types.js';
import { loadSchemaFile, type SchemaIndex } from '../schema/schema-index.js';
import type { CanonicalMap } from './canonical-map.js';

/**
 * Slot error rate as used for SGD NLG (Kale & Rastogi 2020; Tsai et al.): an utterance has a slot
 * error when a value of a non-categorical slot in its actions does not occur in it, compared
 * case-insensitively. Non-categorical values are copied from the dialogue (names, times, addresses),
 * so a faithful utterance is expected to reproduce them exactly; categorical values (True, 2, ...)
 * are verbalised freely and are left to SGSAcc. The rate is the percentage of utterances with at
 * least one such value that have an error, overall and per service.
 *
 * Which actions count: every act whose slot is a non-categorical schema slot and that carries
 * values: INFORM, OFFER, CONFIRM, and REQUEST when it offers choices ("Los Angeles or San Diego?").
 * INFORM_COUNT's `count` and OFFER_INTENT's `intent` are not schema slots (the schema lookup says
 * so), so they are not counted: a count is often written as a word ("three") and an intent is
 * never verbalised by name.
 */

/** Whether a slot is categorical; undefined when the schema has no such slot (then it is not counted). */
export type IsCategorical = (service: string, slot: string) => boolean | undefined;

/**
 * Categorical-ness straight from a schema file, without the pseudo-slots the MultiWOZ adapter adds
 * for reference building (choice, booking slots of other domains): SER counts schema slots only,
 * so `todeval ser` and `todeval score` must agree on MultiWOZ by both using this.
 */
export function schemaFileIsCategorical(schemaFile: string): IsCategorical {
  const schema = loadSchemaFile(schemaFile);
  return (service, slot) => schema.slot(service, slot)?.isCategorical;
}

/**
 * The categorical test SER uses for a loaded dataset. MultiWOZ's index also holds the adapter's
 * pseudo-slots, so the schema file it was read from is consulted instead; every caller (ser,
 * score, evaluate --sgsacc) goes through here so their SER figures agree.
 */
export function serIsCategorical(dataset: string, schema: SchemaIndex): IsCategorical {
  if (dataset === 'multiwoz') return schemaFileIsCategorical(schema.source);
  return (service, slot) => schema.slot(service, slot)?.isCategorical;
}

export interface SerOptions {
  /** Generated utterances by turn id; when absent the ground-truth utterances are scored. */
  predictions?: Map<string, string>;
  isCategorical: IsCategorical;
  /** Paraphrase index for the robust variant (MultiWOZ: GCDF1's multiwoz21_canonical_map.json). */
  canonicalMap?: CanonicalMap;
  /** Also compute the robust variant (paraphrases and light normalisation). */
  robust?: boolean;
  /**
   * Each scored turn's strict verdict: true when a checked value is missing, null when the turn has
   * no value to check (the per-turn statistics of SER: docs/significance.md).
   */
  onTurn?: (id: string, slotError: boolean | null) => void;
}

export interface SerCounts {
  /** Percentage of `total` utterances with at least one missing value. */
  ser: number;
  errors: number;
  total: number;
}

export interface SlotError {
  id: string;
  service: string;
  act: string;
  slot: string;
  value: string;
}

export interface SerScores {
  ser: number;
  errors: number;
  /** Utterances with at least one checked value: the denominator. */
  utterancesWithValues: number;
  perService: Record<string, SerCounts>;
  erroneous: SlotError[];
}

export interface SerReport extends SerScores {
  /** Turns looked at (with a prediction when predictions are given). */
  turnsScored: number;
  /** Values not checked because they cannot appear verbatim ("dontcare", "?", "none", ""). */
  skippedValues: { id: string; service: string; act: string; slot: string; value: string }[];
  /** Turns with no prediction (only when predictions are given); never scored. */
  missingIds: string[];
  /** How many of the missing turns had checkable values, i.e. would have counted in the denominator. */
  missingWithValues: number;
  /** Prediction ids that match no turn. */
  extraIds: string[];
  robust?: SerScores;
}

/**
 * Values that name no surface text: the user's indifference, an open question or an empty
 * annotation. MultiWOZ writes "?" / "none" in request acts; "dontcare" can only be paraphrased.
 */
const UNVERBALISABLE = new Set(['', 'dontcare', "don't care", 'do nt care', '?', 'none', 'not mentioned']);

export function isVerbalisable(value: string): boolean {
  return !UNVERBALISABLE.has(value.trim().toLowerCase());
}

export function strictContains(utterance: string, value: string): boolean {
  return utterance.toLowerCase().includes(value.toLowerCase());
}

/**
 * Light normalisation for the robust variant: lowercase, punctuation to spaces (MultiWOZ text is
 * tokenised, "john 's" vs "john's"), collapse spaces. Colons are kept so times stay times.
 */
export function normaliseText(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}:]+/gu, ' ')
    .trim()
    .replace(/\s+/g, ' ');
}

/** Word-bounded containment on normalised text, so "east" does not match inside "northeast". */
function containsWords(normUtterance: string, normValue: string): boolean {
  if (normValue === '') return false;
  return ` ${normUtterance} `.includes(` ${normValue} `);
}

/**
 * The same clock time written the other common ways: "17:30" <-> "5:30 pm" / "5:30pm",
 * "09:15" <-> "9:15" / "9:15 am". SGD values are 12-hour ("5:30 pm"), MultiWOZ values 24-hour;
 * systems trained on one corpus write the other, and both name the same time unambiguously.
 */
export function timeVariants(value: string): string[] {
  const v = value.trim().toLowerCase();
  let h: number;
  let m: string;
  const h24 = /^(\d{1,2}):(\d{2})$/.exec(v);
  const h12 = /^(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?$/.exec(v);
  if (h12) {
    h = Number(h12[1]) % 12 + (h12[3] === 'p' ? 12 : 0);
    m = h12[2];
  } else if (h24) {
    h = Number(h24[1]);
    m = h24[2];
  } else {
    return [];
  }
  if (h > 24 || Number(m) > 59) return [];
  const hh = h % 24;
  const twelve = hh % 12 === 0 ? 12 : hh % 12;
  const suffix = hh < 12 ? 'am' : 'pm';
  const out = new Set([
    `${String(hh).padStart(2, '0')}:${m}`,
    `${hh}:${m}`,
    `${twelve}:${m} ${suffix}`,
    `${twelve}:${m}${suffix}`,
  ]);
  // A bare "5:30" in text is read as either half of the day; accept it for times after noon too.
  out.add(`${twelve}:${m}`);
  return [...out];
}

const CONVLAB_SLOT_ALIASES: Record<string, string> = {
  leave: 'leaveat',
  arrive: 'arriveby',
  depart: 'departure',
  dest: 'destination',
  price: 'pricerange',
};

/**
 * The canonical map keys slots by MultiWOZ 2.1 names (area, leaveat, people, ...). Accept 2.2 names
 * ("restaurant-booktime") and ConvLab's ("Leave", "Dest") by stripping the domain prefix and the
 * "book" prefix and translating ConvLab's short forms.
 */
export function canonicalMapSlot(map: CanonicalMap, service: string, slot: string): string | undefined {
  let s = slot.toLowerCase();
  const prefix = `${service.toLowerCase()}-`;
  if (s.startsWith(prefix)) s = s.slice(prefix.length);
  const candidates = [s, s.replace(/^book/, ''), CONVLAB_SLOT_ALIASES[s]];
  return candidates.find((c) => c !== undefined && map.hasSlot(c));
}

/** Robust presence: strict match, else normalised match of the value, its time variants, or any paraphrase. */
export function robustContains(
  utterance: string,
  value: string,
  service: string,
  slot: string,
  canonicalMap?: CanonicalMap,
): boolean {
  if (strictContains(utterance, value)) return true;
  const normU = normaliseText(utterance);
  const forms = new Set<string>([value, ...timeVariants(value)]);
  if (canonicalMap) {
    const mapSlot = canonicalMapSlot(canonicalMap, service, slot);
    if (mapSlot) {
      const domain = service.toLowerCase().replace(/_\d+$/, '');
      for (const f of canonicalMap.equivalents(mapSlot, value, domain)) forms.add(f);
    }
  }
  for (const f of forms) if (containsWords(normU, normaliseText(f))) return true;
  return false;
}

interface Check {
  action: DialogueAction;
  value: string;
}

class Tally {
  errors = 0;
  total = 0;
  readonly perService = new Map<string, { errors: number; total: number }>();
  readonly erroneous: SlotError[] = [];

  /** Counts one utterance; true when it has a slot error. */
  add(id: string, checks: Check[], present: (c: Check) => boolean): boolean {
    const missingByService = new Map<string, boolean>();
    for (const c of checks) {
      const ok = present(c);
      const svc = c.action.service;
      missingByService.set(svc, (missingByService.get(svc) ?? false) || !ok);
      if (!ok) this.erroneous.push({ id, service: svc, act: c.action.act, slot: c.action.slot, value: c.value });
    }
    const anyMissing = [...missingByService.values()].some(Boolean);
    this.total += 1;
    if (anyMissing) this.errors += 1;
    // A multi-service turn counts once in each of its services.
    for (const [svc, missing] of missingByService) {
      const s = this.perService.get(svc) ?? { errors: 0, total: 0 };
      s.total += 1;
      if (missing) s.errors += 1;
      this.perService.set(svc, s);
    }
    return anyMissing;
  }

  scores(): SerScores {
    const perService: Record<string, SerCounts> = {};
    for (const svc of [...this.perService.keys()].sort()) {
      const s = this.perService.get(svc)!;
      perService[svc] = { ser: serPercent(s.errors, s.total), errors: s.errors, total: s.total };
    }
    return {
      ser: serPercent(this.errors, this.total),
      errors: this.errors,
      utterancesWithValues: this.total,
      perService,
      erroneous: this.erroneous,
    };
  }
}

/** SER as a percentage of `d` utterances with values; 0 when there are none (the reports print 0.00). */
export function serPercent(n: number, d: number): number {
  return d === 0 ? 0 : (100 * n) / d;
}

export function computeSer(turns: Turn[], opts: SerOptions): SerReport {
  const strict = new Tally();
  const robust = opts.robust ? new Tally() : undefined;
  const skippedValues: SerReport['skippedValues'] = [];
  const missingIds: string[] = [];
  let missingWithValues = 0;
  let turnsScored = 0;

  for (const turn of turns) {
    const checks: Check[] = [];
    for (const action of turn.actions) {
      if (action.values.length === 0) continue;
      if (opts.isCategorical(action.service, action.slot) !== false) continue;
      for (const value of action.values) {
        if (!isVerbalisable(value)) {
          skippedValues.push({ id: turn.id, service: action.service, act: action.act, slot: action.slot, value });
          continue;
        }
        checks.push({ action, value });
      }
    }
    let utterance = turn.utterance;
    if (opts.predictions) {
      const predicted = opts.predictions.get(turn.id);
      if (predicted === undefined) {
        missingIds.push(turn.id);
        if (checks.length > 0) missingWithValues += 1;
        continue;
      }
      utterance = predicted;
    }
    turnsScored += 1;
    if (checks.length === 0) {
      opts.onTurn?.(turn.id, null);
      continue;
    }
    const error = strict.add(turn.id, checks, (c) => strictContains(utterance, c.value));
    opts.onTurn?.(turn.id, error);
    robust?.add(turn.id, checks, (c) =>
      robustContains(utterance, c.value, c.action.service, c.action.slot, opts.canonicalMap),
    );
  }

  const turnIds = new Set(turns.map((t) => t.id));
  const extraIds = opts.predictions ? [...opts.predictions.keys()].filter((id) => !turnIds.has(id)).sort() : [];
  return {
    ...strict.scores(),
    turnsScored,
    skippedValues,
    missingIds,
    missingWithValues,
    extraIds,
    ...(robust ? { robust: robust.scores() } : {}),
  };
}

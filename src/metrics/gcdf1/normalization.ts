/**
 * Value normalization before matching user/system constraints against the goal, as the reference
 * does it: a value that is not canonical is matched (fuzzywuzzy token_sort_ratio, threshold 0.9) first
 * against the paraphrases of the goal's values for that slot, then against every paraphrase in the
 * canonical map, and replaced by the canonical value owning the best match. Without a map the goal
 * values themselves are the candidates.
 */
import {
  ACT_SLOT_SEP,
  appendParams,
  COREFERENCE_VALUES,
  DOMAIN_CONSTRAINT_GOAL_KEYS,
  INFORM_ACTS,
  MULTIPLE_VALUE_SEP,
  REQUEST_ACTS,
  SLOT_VALUE_SEP,
  speakerTurns,
  turnActions,
  type ByService,
} from './acts.js';
import { contains, entriesOf, isTable, type CanonicalValues, type CmapNode, type CmapTable } from './canonical-values.js';
import type { Gcdf1Config } from './config.js';
import { tokenSortRatio } from './fuzzy.js';
import type { DialogueRecord } from './record.js';
import type { DomainGoal, Goal, ParamsByService, Turn } from './types.js';

type IgcdConfig = Gcdf1Config['igcd_f1'];

export interface MatchContext {
  config: IgcdConfig;
  lowercase: boolean;
  cmap?: CanonicalValues;
  record?: DialogueRecord;
  /** Where match results are logged: preprocessed_user_constraints, preprocessed_sys_constraints, ... */
  field: string;
  cache: Map<string, string | undefined>;
}

/** Best candidate by token_sort_ratio/100 (first of equal scores), if it reaches the threshold. */
export function findBestValueMatch(candidates: string[], value: string, threshold: number): string | undefined {
  let best = -Infinity;
  let bestIdx = 0;
  for (let i = 0; i < candidates.length; i++) {
    const score = tokenSortRatio(value, candidates[i]) / 100;
    if (score > best) {
      best = score;
      bestIdx = i;
    }
  }
  // math.isclose(threshold, best) with its default relative tolerance
  const close = Math.abs(threshold - best) <= 1e-9 * Math.max(Math.abs(threshold), Math.abs(best));
  return best > threshold || close ? candidates[bestIdx] : undefined;
}

export function goalSlotValues(domainGoal: DomainGoal | undefined, slot: string, lowercase = true): Set<string> {
  const out = new Set<string>();
  for (const key of DOMAIN_CONSTRAINT_GOAL_KEYS) {
    const sub = domainGoal?.[key];
    // goal slot names are looked up as given (arriveBy is not arriveby), like the reference
    if (sub && Object.prototype.hasOwnProperty.call(sub, slot)) {
      const v = String(sub[slot]);
      out.add(lowercase ? v.toLowerCase() : v);
    }
  }
  return out;
}

function notInGoalTable(slotTable: CmapTable, domain: string): CmapTable {
  const special = slotTable.get('special_keys');
  const notInGoal = isTable(special) ? special.get('not_in_goal') : undefined;
  if (!isTable(notInGoal)) return new Map();
  const byDomain = notInGoal.get(domain);
  if (isTable(byDomain) && byDomain.size > 0) return byDomain;
  return notInGoal;
}

/** The slot's table, narrowed to the domain's table when the slot is split by domain. */
function slotTableFor(cmap: CanonicalValues, slot: string, domain: string): CmapTable | undefined {
  let table = cmap.root.get(slot) ?? cmap.root.get(slot.toLowerCase());
  if (!isTable(table)) return undefined;
  const byDomain = table.get(domain);
  if (isTable(byDomain)) table = byDomain;
  return table;
}

/** First canonical value (in map order) listing `paraphrase`, then the not_in_goal entries. */
export function canonicalValueOf(cmap: CanonicalValues, domain: string, slot: string, paraphrase: string): string | undefined {
  const table = slotTableFor(cmap, slot, domain);
  if (!table) return undefined;
  for (const [canonical, node] of table) {
    if (canonical === 'special_keys') continue;
    if (contains(node, paraphrase)) return canonical;
  }
  const special = table.get('special_keys');
  let notInGoal: CmapNode | undefined = isTable(special) ? special.get('not_in_goal') : undefined;
  if (isTable(notInGoal) && notInGoal.has(domain)) notInGoal = notInGoal.get(domain);
  if (!isTable(notInGoal)) return undefined;
  for (const [canonical, node] of notInGoal) if (contains(node, paraphrase)) return canonical;
  return undefined;
}

const extendedCandidates = new WeakMap<CmapTable, Map<string, string[]>>();

/** Every paraphrase of the slot table plus those of its not_in_goal values (cached per table). */
function allParaphrases(table: CmapTable, domain: string): string[] {
  let byDomain = extendedCandidates.get(table);
  if (!byDomain) extendedCandidates.set(table, (byDomain = new Map()));
  let list = byDomain.get(domain);
  if (!list) {
    list = [];
    for (const [canonical, node] of table) if (canonical !== 'special_keys') list.push(...entriesOf(node));
    const nig = notInGoalTable(table, domain);
    for (const node of nig.values()) list.push(...entriesOf(node));
    byDomain.set(domain, list);
  }
  return list;
}

/**
 * Replace non-canonical values in `constraints` (domain -> `slot===value` -> turns) by their canonical
 * form, merging turn lists when the canonical constraint is already present. Only goal domains.
 */
export function normalizeConstraintValues(constraints: ParamsByService, goal: Goal, ctx: MatchContext): void {
  const threshold = ctx.config.value_matching.fuzzy_match_threshold;
  const cmap = ctx.cmap;
  for (const domain of Object.keys(goal)) {
    const params = constraints.get(domain);
    if (!params) continue;
    const slots = [...params.keys()].map((p) => p.split(SLOT_VALUE_SEP)[0]);
    const valuesBySlot = new Map<string, Set<string>>();
    for (const slot of slots) {
      for (const constraint of params.keys()) {
        // substring test, as in the reference: "day" also collects the value of "leaveat===tuesday"
        if (constraint.includes(slot)) {
          let set = valuesBySlot.get(slot);
          if (!set) valuesBySlot.set(slot, (set = new Set()));
          set.add(constraint.split(SLOT_VALUE_SEP).slice(1).join(SLOT_VALUE_SEP));
        }
      }
    }
    for (const [slot, values] of valuesBySlot) {
      let slotTable: CmapTable | undefined;
      let known: Set<string>;
      if (cmap) {
        slotTable = slotTableFor(cmap, slot, domain);
        if (!slotTable) continue; // e.g. slots the system informs that the map does not cover
        known = new Set([...slotTable.keys(), ...notInGoalTable(slotTable, domain).keys()]);
      } else {
        known = goalSlotValues(goal[domain], slot);
      }
      const nonCanonical = [...values].filter((v) => !known.has(v));
      for (const value of nonCanonical) {
        // a coreference like "the restaurant" would match an arbitrary name
        if ((COREFERENCE_VALUES[domain] ?? []).includes(value)) continue;
        const stages: [string, string[], string | undefined][] = [];
        if (cmap && slotTable) {
          const table = slotTable;
          const goalValues = [...goalSlotValues(goal[domain], slot, ctx.lowercase)];
          stages.push(['simple', goalValues.flatMap((v) => entriesOf(table.get(v))), undefined]);
          stages.push(['extended', allParaphrases(table, domain), `${slot}|${domain}`]);
        } else {
          const simple = [...known];
          if (!simple.length) continue;
          stages.push(['simple', simple, undefined]);
        }
        const results: Record<string, unknown>[] = [];
        for (const [method, candidates, cacheKey] of stages) {
          if (!candidates.length) continue;
          let best: string | undefined;
          const key = cacheKey === undefined ? undefined : `${cacheKey}\u0000${value}`;
          if (key !== undefined && ctx.cache.has(key)) best = ctx.cache.get(key);
          else {
            best = findBestValueMatch(candidates, value, threshold);
            if (key !== undefined) ctx.cache.set(key, best);
          }
          const canonical = best ? (cmap ? canonicalValueOf(cmap, domain, slot, best) : best) : undefined;
          if (best && canonical !== undefined) {
            const original = `${slot}${SLOT_VALUE_SEP}${value}`;
            const turns = params.get(original);
            // absent only when the value was collected through another slot's substring match
            if (turns) {
              params.delete(original);
              const canonicalConstraint = `${slot}${SLOT_VALUE_SEP}${canonical}`;
              const existing = params.get(canonicalConstraint);
              if (existing) {
                existing.push(...turns);
                existing.sort((a, b) => a - b);
              } else {
                params.set(canonicalConstraint, turns);
              }
            }
          }
          results.push({ best_match: best ?? null, hyp_value: value, canonical_value: canonical ?? null, method, slot });
          if (best) break;
        }
        if (ctx.record && results.length) {
          const matched = results.find((r) => r.best_match !== null);
          const kind = matched ? 'values_matched' : 'matching_failures';
          ctx.record.note('igcd_f1', `${ctx.field}.${kind}`, domain, matched ?? results[results.length - 1]);
        }
      }
    }
  }
}

/**
 * One value per action when a slot has several in a turn (or merged into one, when configured).
 * The reference's exception list for address/phone never applies (it compares the act-prefixed
 * slot), so values are always split.
 */
export function splitMultipleValues(actions: ByService<string>, merge: boolean): void {
  for (const [service, list] of actions) {
    const idx = list.map((a, i) => (a.includes(MULTIPLE_VALUE_SEP) ? i : -1)).filter((i) => i >= 0);
    if (!idx.length) continue;
    if (merge) {
      for (const i of idx) list[i] = list[i].split(MULTIPLE_VALUE_SEP).join(' ');
      continue;
    }
    const multi = idx.reverse().map((i) => list.splice(i, 1)[0]);
    const single: string[] = [];
    for (const action of multi) {
      const [head, ...rest] = action.split(SLOT_VALUE_SEP);
      const value = rest.join(SLOT_VALUE_SEP);
      for (const v of value.split(MULTIPLE_VALUE_SEP)) single.push(`${head}${SLOT_VALUE_SEP}${v}`);
    }
    list.push(...single);
    actions.set(service, list);
  }
}

function hasSlotValue(action: string): boolean {
  return (
    !action.includes('general') &&
    !REQUEST_ACTS.some((p) => p.test(action)) &&
    action.includes(SLOT_VALUE_SEP) &&
    action.includes(ACT_SLOT_SEP)
  );
}

/** Normalize the values of one turn's actions in place (see normalizeConstraintValues). */
export function normalizeTurnActions(actions: ByService<string>, goal: Goal, ctx: MatchContext): void {
  if (!ctx.config.value_matching.use_fuzzy_match) return;
  const params: ParamsByService = new Map();
  const positions = new Map<string, [number, string][]>();
  for (const [service, list] of actions) {
    list.forEach((action, i) => {
      if (!hasSlotValue(action)) return;
      const [act, param] = action.split(ACT_SLOT_SEP);
      if (!positions.has(service)) positions.set(service, []);
      positions.get(service)!.push([i, act]);
      if (!params.has(service)) params.set(service, new Map());
      // a repeated parameter keeps the last position only, as in the reference
      params.get(service)!.set(param, [i]);
    });
  }
  normalizeConstraintValues(params, goal, ctx);
  for (const [service, list] of actions) {
    for (const [i, act] of positions.get(service) ?? []) {
      for (const [param, turns] of params.get(service) ?? []) {
        // merged parameters (two positions) are left as they were, like the reference
        if (turns.length === 1 && turns[0] === i) list[i] = `${act}${ACT_SLOT_SEP}${param}`;
      }
    }
  }
}

/** Normalized action parameters by service over one or both speakers' turns, with turn indices. */
export function parametersByService(
  dialogue: { turns: Turn[] },
  goal: Goal,
  ctx: MatchContext,
  opts: { user: boolean; system: boolean; acts: RegExp[] },
): ParamsByService {
  const out: ParamsByService = new Map();
  for (const [idx, turn] of speakerTurns(dialogue, opts.user, opts.system)) {
    const actions = turnActions(turn, { acts: opts.acts, lowercase: ctx.lowercase });
    splitMultipleValues(actions, ctx.config.multiple_values_for_slot_in_turn.merge);
    normalizeTurnActions(actions, goal, ctx);
    const thisTurn: ParamsByService = new Map();
    for (const [service, list] of actions) {
      for (const action of list) {
        const parts = action.split(ACT_SLOT_SEP);
        if (parts.length < 2) continue; // acts without parameters
        if (!thisTurn.has(service)) thisTurn.set(service, new Map());
        thisTurn.get(service)!.set(parts[1], [idx]);
      }
    }
    appendParams(out, thisTurn);
  }
  return out;
}

/**
 * What the system's NLU understood in the given system turns (most recent first, as passed), as
 * normalized inform parameters. Indices are relative to the span and offset by the caller.
 */
export function systemNluParams(sysTurns: Turn[], goal: Goal, ctx: MatchContext): ParamsByService {
  const turns: Turn[] = [{ speaker: 'USER' }];
  for (const turn of [...sysTurns].reverse()) {
    turns.push({ speaker: 'SYSTEM', frames: turn.nlu?.frames ?? [] }, { speaker: 'USER' });
  }
  return parametersByService({ turns }, goal, { ...ctx, field: 'preprocessed_sys_nlu' }, {
    user: false,
    system: true,
    acts: INFORM_ACTS,
  });
}

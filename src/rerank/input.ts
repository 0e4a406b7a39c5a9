import { schemaValidator, type SchemaCheck } from '../util/json-schema.js';
import { InvalidCollector } from '../adapters/collect.js';
import type { DialogueAction, Turn } from '../adapters/types.js';
import { checkActionAgainstSchema } from '../adapters/validate.js';
import { numberActions, type ExpandedAction } from '../metrics/sgsacc/from-turns.js';
import type { SchemaIndex } from '../schema/schema-index.js';
import { InputError } from '../util/errors.js';
import { readJsonlFile } from '../util/json-file.js';
import { refuseDuplicateSystems, type RerankAction, type RerankItem } from './rerank.js';

/** One line of the rerank input, as schemas/rerank-input.schema.json describes it. */
export interface RawRerankItem {
  id: string;
  service?: string;
  actions?: { service?: string; act: string; slot: string; values: string[] }[];
  dataset_id?: string;
  context?: string;
  candidates: { system: string; text: string; likelihood?: number }[];
}

function getValidator(): SchemaCheck {
  return schemaValidator('rerank-input.schema.json');
}

/** Reads and validates the JSONL input; with skipInvalid, bad lines are collected instead of thrown. */
export function readRerankInput(file: string, opts: { skipInvalid?: boolean } = {}): { items: { line: number; item: RawRerankItem }[]; invalid: InputError[] } {
  // Lines that are not JSON are merged back in line order, so the first bad line is the one
  // reported (or thrown) first whatever is wrong with it.
  const unparsed: { line: number; error: InputError }[] = [];
  const parsed = readJsonlFile(file, { onInvalidLine: (error, line) => unparsed.push({ line, error }) });
  const lines: ({ line: number; value: unknown } | { line: number; error: InputError })[] = [...parsed, ...unparsed].sort((a, b) => a.line - b.line);
  const validate = getValidator();
  const items: { line: number; item: RawRerankItem }[] = [];
  const collector = new InvalidCollector(opts.skipInvalid === true);
  const ids = new Set<string>();
  for (const entry of lines) {
    const where = `line ${entry.line}`;
    let err: InputError | undefined;
    if ('error' in entry) err = entry.error;
    else if (!validate(entry.value)) {
      const e = validate.errors?.[0];
      err = new InputError(`${e?.instancePath ? e.instancePath + ' ' : ''}${e?.message ?? 'invalid'} (schemas/rerank-input.schema.json)`, { file, where });
    } else {
      const item = entry.value as RawRerankItem;
      if (ids.has(item.id)) err = new InputError(`duplicate item id "${item.id}"`, { file, where });
      else {
        ids.add(item.id);
        items.push({ line: entry.line, item });
      }
    }
    if (err) collector.reject(err);
  }
  return { items, invalid: collector.invalid };
}

export interface RerankResolver {
  schema: SchemaIndex;
  dataset: Turn['dataset'];
  /** The rule engine bound to the dataset's schema. */
  expand(turn: Turn): ExpandedAction[];
  /** Dataset turns by id, for items given by `dataset_id`. */
  turnsById?: Map<string, Turn>;
  /** Why the dataset turns (or whole dialogues) skipped as invalid were skipped, by id (invalidTurnReasons). */
  invalidTurns?: Map<string, string>;
}

/**
 * The reasons of a dataset loaded with skipInvalid, by the turn or dialogue id each names (an
 * InputError's `where`; ones naming neither are left out): an item whose dataset_id points at
 * such a turn is then refused for the real reason, not as "not a system turn of the dataset".
 */
export function invalidTurnReasons(invalid: readonly InputError[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of invalid) {
    if (e.where !== undefined && !m.has(e.where)) m.set(e.where, e.message);
  }
  return m;
}

/** Why the dataset turn `id` ("dialogue/turn") was skipped as invalid, by its own id or its dialogue's. */
function invalidReason(id: string, invalid: Map<string, string> | undefined): string | undefined {
  if (!invalid) return undefined;
  const slash = id.lastIndexOf('/');
  return invalid.get(id) ?? (slash > 0 ? invalid.get(id.slice(0, slash)) : undefined);
}

/** Where an item sits: its line in a JSONL file, or a path such as `body/items/3` in a request. */
export type ItemPlace = number | string;

export function itemWhere(raw: { id: string }, at: ItemPlace): string {
  return `${typeof at === 'number' ? `line ${at}` : at} (item ${raw.id})`;
}

/**
 * The dialogue turn an item stands for: its inline actions (checked against the schema) as a turn
 * of their own, or the dataset turn its dataset_id names. `file`/`line` say where the item came
 * from in error messages (an input file, or a request body for the service).
 */
export function turnFromRawItem(raw: Omit<RawRerankItem, 'candidates'>, r: RerankResolver, file: string, at: ItemPlace, utterance = ''): Turn {
  const where = itemWhere(raw, at);
  if (raw.actions) {
    const actions: DialogueAction[] = raw.actions.map((a) => {
      const service = a.service ?? raw.service;
      if (!service && a.slot !== '') throw new InputError(`action ${a.act}(${a.slot}) names no service and the item has none`, { file, where });
      return { service: service ?? 'general', act: a.act, slot: a.slot, values: a.values };
    });
    for (const a of actions) checkActionAgainstSchema(a, r.schema, file, where);
    return {
      id: raw.id,
      dialogueId: raw.id,
      turnIndex: 0,
      dataset: r.dataset,
      services: [...new Set(actions.map((a) => a.service))],
      actions,
      utterance,
      previousUserUtterance: raw.context ?? '',
    };
  }
  const found = r.turnsById?.get(raw.dataset_id!);
  if (!found) {
    const reason = invalidReason(raw.dataset_id!, r.invalidTurns);
    if (reason !== undefined) throw new InputError(`dataset_id "${raw.dataset_id}" names an invalid turn: ${reason}`, { file, where });
    throw new InputError(`dataset_id "${raw.dataset_id}" is not a system turn of the dataset`, { file, where });
  }
  return { ...found, previousUserUtterance: raw.context ?? found.previousUserUtterance };
}

/**
 * An inline act no rule covers (a typo, or another dataset's act name) has no reference: it would
 * count as unrealised for every candidate and quietly flatten the ranking (or score as unscorable).
 */
export function refuseUncoveredActs(expanded: ExpandedAction[], dataset: string, file: string, where: string): void {
  const uncovered = expanded.find((a) => a.candidates.length === 0);
  // Blank values fill no template (src/rules/expand.ts): say so, not that no rule covers the act.
  if (uncovered && uncovered.values.length > 0 && uncovered.values.every((v) => v.trim() === '')) {
    throw new InputError(`action ${uncovered.act}(${uncovered.slot}) has only blank values: nothing to check a candidate against`, { file, where });
  }
  if (uncovered) {
    throw new InputError(`no ${dataset} rule covers act "${uncovered.act}"${uncovered.slot ? ` (slot "${uncovered.slot}")` : ''}: unknown act for --dataset ${dataset}?`, { file, where });
  }
}

/** Turns a raw item into a RerankItem: actions checked against the schema and expanded by the rules. */
export function resolveRerankItem(raw: RawRerankItem, r: RerankResolver, file: string, at: ItemPlace): RerankItem {
  const where = itemWhere(raw, at);
  refuseDuplicateSystems(raw, file, where);
  const turn = turnFromRawItem(raw, r, file, at);
  const expanded = r.expand(turn);
  if (raw.actions) refuseUncoveredActs(expanded, r.dataset, file, where);
  const actions: RerankAction[] = numberActions(expanded);
  return { id: raw.id, actions, context: turn.previousUserUtterance, candidates: raw.candidates };
}

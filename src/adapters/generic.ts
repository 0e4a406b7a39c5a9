import { schemaValidator, type SchemaCheck } from '../util/json-schema.js';
import type { SchemaIndex } from '../schema/schema-index.js';
import { InputError } from '../util/errors.js';
import { readJsonlFile, type FileRead } from '../util/json-file.js';
import type { InvalidCollector } from './collect.js';
import type { DialogueAction, Turn } from './types.js';
import { MULTIWOZ_SYSTEM_ACTS } from './multiwoz.js';
import { SGD_SYSTEM_ACTS } from './sgd.js';
import { checkActionAgainstSchema } from './validate.js';

/** The acts the rules phrase: SGD's and MultiWOZ's system acts (MultiWOZ's case-insensitively). */
const KNOWN_ACTS = new Set([...SGD_SYSTEM_ACTS, ...MULTIWOZ_SYSTEM_ACTS.map((a) => a.toLowerCase())]);
const isKnownAct = (act: string): boolean => SGD_SYSTEM_ACTS.has(act) || KNOWN_ACTS.has(act.toLowerCase());

interface GenericRecord {
  id: string;
  service: string;
  actions: { act: string; slot?: string; values?: string[]; service?: string; intent?: string }[];
  utterance: string;
  context?: string | string[];
}

function validate(): SchemaCheck {
  return schemaValidator('generic-turns.schema.json');
}

function splitId(id: string): { dialogueId: string; turnIndex: number } {
  const m = /^(.*)\/(\d+)$/.exec(id);
  return m ? { dialogueId: m[1], turnIndex: Number(m[2]) } : { dialogueId: id, turnIndex: 0 };
}

export function readGenericTurns(file: string, schema: SchemaIndex, collector: InvalidCollector, limit?: number, read?: FileRead): Turn[] {
  const check = validate();
  const turns: Turn[] = [];
  const firstLineOf = new Map<string, number>();
  const records = readJsonlFile<GenericRecord>(file, {
    onInvalidLine: (e) => collector.reject(e),
    read,
  });
  for (const { line, value } of records) {
    if (limit !== undefined && turns.length >= limit) break;
    const turn = collector.guard(() => {
      const idForMsg = value && typeof value === 'object' && typeof value.id === 'string' ? value.id : undefined;
      const where = idForMsg ? `line ${line} (${idForMsg})` : `line ${line}`;
      if (!check(value)) {
        const e = check.errors?.[0];
        if (e?.keyword === 'required' && (e.params as { missingProperty?: string }).missingProperty === 'utterance') {
          throw new InputError('system turn has no utterance', { file, where });
        }
        throw new InputError(
          `${e?.instancePath || 'record'} ${e?.message ?? 'is invalid'} (schemas/generic-turns.schema.json)`,
          { file, where },
        );
      }
      // Predictions and stored results are keyed by turn id: a repeated id would make them ambiguous.
      const first = firstLineOf.get(value.id);
      if (first !== undefined) throw new InputError(`duplicate turn id "${value.id}" (first on line ${first})`, { file, where });
      firstLineOf.set(value.id, line);
      const unknownAct = value.actions.find((a) => !isKnownAct(a.act));
      if (unknownAct) {
        throw new InputError(`unknown act "${unknownAct.act}" (the rules phrase SGD's and MultiWOZ's system acts)`, { file, where });
      }
      const actions: DialogueAction[] = value.actions.map((a) => {
        const action: DialogueAction = { service: a.service ?? value.service, act: a.act, slot: a.slot ?? '', values: a.values ?? [] };
        if (a.intent) action.intent = a.intent;
        checkActionAgainstSchema(action, schema, file, where);
        return action;
      });
      const ctx = value.context === undefined ? [] : Array.isArray(value.context) ? value.context : [value.context];
      return {
        id: value.id,
        ...splitId(value.id),
        dataset: 'generic' as const,
        services: [...new Set(actions.map((a) => a.service))],
        actions,
        utterance: value.utterance,
        previousUserUtterance: ctx.length ? ctx[ctx.length - 1] : '',
      };
    });
    if (turn) turns.push(turn);
  }
  return turns;
}

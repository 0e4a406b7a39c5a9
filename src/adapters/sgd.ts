import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { SchemaIndex } from '../schema/schema-index.js';
import { schemaError } from '../util/json-schema.js';
import { InputError } from '../util/errors.js';
import { readJsonFile, type FileRead } from '../util/json-file.js';
import type { InvalidCollector } from './collect.js';
import { checkActionAgainstSchema, requireUtterance } from './validate.js';
import { turnId, type DialogueAction, type Turn } from './types.js';

/**
 * The system acts SGD defines. Anything else is a typo or another dataset's act (MultiWOZ's
 * Inform): left through, it would get no reference and silently drop out of every score.
 */
export const SGD_SYSTEM_ACTS = new Set([
  'INFORM', 'REQUEST', 'CONFIRM', 'OFFER', 'NOTIFY_SUCCESS', 'NOTIFY_FAILURE',
  'INFORM_COUNT', 'OFFER_INTENT', 'REQ_MORE', 'GOODBYE',
]);

interface SgdAction {
  act: string;
  slot?: string;
  values?: unknown[];
  canonical_values?: unknown[];
}
interface SgdFrame {
  service: string;
  actions: SgdAction[];
  state?: { active_intent?: string };
}
interface SgdTurn {
  speaker: string;
  utterance?: string;
  frames: SgdFrame[];
}
interface SgdDialogue {
  dialogue_id: string;
  turns: SgdTurn[];
}

/** `dialogues_*.json` of a split folder, sorted so turn order and value indexes are stable. */
export function sgdDialogueFiles(dirOrFile: string): string[] {
  let st;
  try {
    st = statSync(dirOrFile);
  } catch {
    throw new InputError('no such file or folder', { file: dirOrFile });
  }
  if (!st.isDirectory()) return [dirOrFile];
  const files = readdirSync(dirOrFile)
    .filter((f) => /^dialogues_\d+\.json$/.test(f))
    .sort()
    .map((f) => path.join(dirOrFile, f));
  if (files.length === 0) throw new InputError('no dialogues_*.json files in folder', { file: dirOrFile });
  return files;
}

function checkSgdShape(raw: unknown, file: string): SgdDialogue[] {
  if (!Array.isArray(raw)) {
    const looksConvlab =
      raw !== null && typeof raw === 'object' && Object.values(raw as object).some((d) => d && typeof d === 'object' && 'log' in d);
    throw new InputError(
      looksConvlab
        ? 'wrong dataset format: this is a MultiWOZ ConvLab file (use --dataset multiwoz), expected SGD dialogues (a JSON array)'
        : 'wrong dataset format: expected SGD dialogues (a JSON array of {dialogue_id, turns})',
      { file },
    );
  }
  return raw as SgdDialogue[];
}

/** Why an SGD action breaks schemas/sgd-action.schema.json (ajv's first error), or undefined. */
export function sgdActionTypeError(action: unknown): string | undefined {
  return schemaError(action, 'sgd-action.schema.json');
}

function stringValues(v: unknown[] | undefined): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/**
 * The user turn's frames as activeIntents reads them: "frames": {} or [null] made it throw a
 * TypeError naming no file or turn, which --skip-invalid could not skip. Missing frames stay
 * allowed (no active intents), as before.
 */
function checkUserFrames(user: SgdTurn, userIndex: number, file: string, where: string): void {
  const frames: unknown = user.frames;
  if (frames === undefined) return;
  const bad = !Array.isArray(frames)
    ? '"frames" must be a list'
    : frames.some((f: unknown) => f === null || typeof f !== 'object' || Array.isArray(f))
      ? 'each frame must be an object'
      : frames.some((f: { state?: unknown }) => f.state !== undefined && (f.state === null || typeof f.state !== 'object' || Array.isArray(f.state)))
        ? 'a frame\'s "state" must be an object'
        : undefined;
  if (bad) throw new InputError(`wrong dataset format: user turn ${userIndex} before this system turn: ${bad}`, { file, where });
}

/** The user's active intent per service, from the user turn just before a system turn. */
function activeIntents(user: SgdTurn | undefined): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of user?.frames ?? []) {
    const it = f.state?.active_intent;
    if (it && it !== 'NONE') m.set(f.service, it);
  }
  return m;
}

export function readSgdTurns(files: string[], schema: SchemaIndex, collector: InvalidCollector, limit?: number, read?: FileRead): Turn[] {
  const turns: Turn[] = [];
  // Turn ids key predictions and stored results: a dialogue id seen twice (the same file copied
  // into a folder twice, say) would score its turns twice.
  const fileOf = new Map<string, string>();
  for (const file of files) {
    const dialogues = checkSgdShape(readJsonFile(file, read), file);
    for (let di = 0; di < dialogues.length; di++) {
      if (limit !== undefined && turns.length >= limit) return turns;
      const d = dialogues[di];
      if (!d || typeof d.dialogue_id !== 'string' || !Array.isArray(d.turns)) {
        // Name the dialogue by its id when it has one, and say which of the two is wrong.
        const hasId = typeof d?.dialogue_id === 'string';
        collector.reject(new InputError(
          hasId
            ? 'wrong dataset format: "turns" must be a list (not SGD format)'
            : 'wrong dataset format: dialogue without a string "dialogue_id" (not SGD format)',
          { file, where: hasId ? d.dialogue_id : `dialogue #${di}` },
        ));
        continue;
      }
      const seenIn = fileOf.get(d.dialogue_id);
      if (seenIn !== undefined) {
        collector.reject(new InputError(`duplicate dialogue id (first in ${seenIn})`, { file, where: d.dialogue_id }));
        continue;
      }
      fileOf.set(d.dialogue_id, file);
      for (let ti = 0; ti < d.turns.length; ti++) {
        const t = d.turns[ti];
        if (t?.speaker === 'USER') continue;
        if (t?.speaker !== 'SYSTEM') {
          // "system" or a missing speaker would drop the turn without a word
          collector.reject(new InputError(`speaker must be "USER" or "SYSTEM", got ${JSON.stringify(t?.speaker)}`, { file, where: turnId(d.dialogue_id, ti) }));
          continue;
        }
        if (limit !== undefined && turns.length >= limit) return turns;
        const where = turnId(d.dialogue_id, ti);
        const turn = collector.guard(() => sgdSystemTurn(d, ti, schema, file, where));
        if (turn) turns.push(turn);
      }
    }
  }
  return turns;
}

function sgdSystemTurn(d: SgdDialogue, ti: number, schema: SchemaIndex, file: string, where: string): Turn {
  const t = d.turns[ti];
  const utterance = requireUtterance(t.utterance, file, where);
  if (!Array.isArray(t.frames)) throw new InputError('system turn has no frames', { file, where });
  const prev = ti > 0 ? d.turns[ti - 1] : undefined;
  if (prev?.speaker === 'USER') checkUserFrames(prev, ti - 1, file, where);
  const intents = activeIntents(prev?.speaker === 'USER' ? prev : undefined);
  const actions: DialogueAction[] = [];
  const services: string[] = [];
  for (const f of t.frames) {
    if (typeof f?.service !== 'string' || !Array.isArray(f.actions)) {
      throw new InputError('frame without service/actions', { file, where });
    }
    services.push(f.service);
    for (const [k, a] of f.actions.entries()) {
      if (typeof a?.act !== 'string') throw new InputError('action without act', { file, where });
      // Types the reading below would otherwise coerce or drop: "values": "lemon" (a string, not a
      // list) gave the action no candidates and took it out of every denominator without a word.
      const typeError = sgdActionTypeError(a);
      if (typeError) throw new InputError(`${f.service} action ${k} (${a.act}): ${typeError}`, { file, where });
      if (!SGD_SYSTEM_ACTS.has(a.act)) {
        throw new InputError(`unknown SGD system act "${a.act}" (SGD has ${[...SGD_SYSTEM_ACTS].join(', ')})`, { file, where });
      }
      const action: DialogueAction = {
        service: f.service,
        act: a.act,
        slot: typeof a.slot === 'string' ? a.slot : '',
        values: stringValues(a.values),
        canonicalValues: stringValues(a.canonical_values),
      };
      const intent = a.slot === 'intent' ? action.values[0] : intents.get(f.service);
      if (intent) action.intent = intent;
      checkActionAgainstSchema(action, schema, file, where);
      actions.push(action);
    }
  }
  return {
    id: where,
    dialogueId: d.dialogue_id,
    turnIndex: ti,
    dataset: 'sgd',
    services,
    actions,
    utterance,
    previousUserUtterance: prev?.speaker === 'USER' && typeof prev.utterance === 'string' ? prev.utterance : '',
  };
}

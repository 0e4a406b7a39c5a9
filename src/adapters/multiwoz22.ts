import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { SchemaIndex } from '../schema/schema-index.js';
import { InputError } from '../util/errors.js';
import { readJsonFile, type FileRead } from '../util/json-file.js';
import type { InvalidCollector } from './collect.js';
import { multiwozSystemTurn, type ConvlabDialogue, type ConvlabTurn } from './multiwoz.js';
import { loadSlotMap } from './multiwoz-slots.js';
import { sgdDialogueFiles } from './sgd.js';
import { turnId, type Turn } from './types.js';

interface Mwz22Turn {
  turn_id?: string;
  speaker?: string;
  utterance?: string;
}
interface Mwz22Dialogue {
  dialogue_id: string;
  /** Unchecked: each is tested with isTurnObject before it is read. */
  turns: unknown[];
}

/** A turn as 2.2 writes it, an object; null or a list is refused naming the turn (reading it threw a TypeError). */
function isTurnObject(t: unknown): t is Mwz22Turn {
  return t !== null && typeof t === 'object' && !Array.isArray(t);
}
type ActsFile = Record<string, Record<string, { dialog_act?: Record<string, [string, string][]>; dialogue_acts?: Record<string, [string, string][]> }>>;

/**
 * MultiWOZ 2.2 keeps dialogues in SGD-style files without acts; the acts sit in dialog_acts.json
 * (2.1 style, keyed by dialogue id and turn id) in the dataset folder. Returns that file for a
 * dialogues file or split folder, or undefined when there is none (then it is not 2.2 data).
 */
export function findDialogActsFile(input: string): string | undefined {
  let dir = input;
  try {
    if (!statSync(input).isDirectory()) dir = path.dirname(input);
  } catch {
    return undefined;
  }
  for (const d of [dir, path.dirname(dir)]) {
    const f = path.join(d, 'dialog_acts.json');
    if (existsSync(f)) return f;
  }
  return undefined;
}

/** "PMUL4398.json" -> "PMUL4398", the id MultiWOZ 2.1 / ConvLab and predictions files use. */
function bareId(id: string): string {
  return id.replace(/\.json$/i, '');
}

export function readMultiwoz22Turns(
  input: string,
  actsFile: string,
  schema: SchemaIndex,
  collector: InvalidCollector,
  limit?: number,
  read?: FileRead,
): Turn[] {
  const acts = readJsonFile<ActsFile>(actsFile, read);
  if (!acts || typeof acts !== 'object' || Array.isArray(acts)) {
    throw new InputError('wrong dataset format: dialog_acts.json must map dialogue ids to turns', { file: actsFile });
  }
  const map = loadSlotMap();
  const turns: Turn[] = [];
  // As for SGD: turn ids key predictions and stored results, so a dialogue seen twice (in two files
  // or twice in one) would be scored and counted twice. Keyed by the bare id, which the turn ids
  // are built from: "PMUL0001.json" and "PMUL0001" are the same dialogue.
  const fileOf = new Map<string, string>();
  for (const file of sgdDialogueFiles(input)) {
    const raw = readJsonFile(file, read);
    if (!Array.isArray(raw)) {
      throw new InputError('wrong dataset format: expected MultiWOZ 2.2 dialogues (a JSON array of {dialogue_id, turns})', { file });
    }
    for (const d of raw as Mwz22Dialogue[]) {
      if (!d || typeof d.dialogue_id !== 'string' || !Array.isArray(d.turns)) {
        collector.reject(new InputError('wrong dataset format: dialogue without dialogue_id/turns', { file }));
        continue;
      }
      const seenIn = fileOf.get(bareId(d.dialogue_id));
      if (seenIn !== undefined) {
        collector.reject(new InputError(`duplicate dialogue id (first in ${seenIn})`, { file, where: d.dialogue_id }));
        continue;
      }
      fileOf.set(bareId(d.dialogue_id), file);
      const dialogueActs = acts[d.dialogue_id] ?? acts[bareId(d.dialogue_id)] ?? acts[`${bareId(d.dialogue_id)}.json`];
      // The ConvLab-shaped log lets the 2.1 code (slot mapping, Booking-* attribution) run unchanged.
      const log: ConvlabTurn[] = d.turns.map((t, i) => {
        // A turn that is not an object only holds its place here; the loop below refuses it.
        if (!isTurnObject(t)) return {};
        const a = dialogueActs?.[t.turn_id ?? String(i)];
        return { text: t.utterance, dialog_act: a?.dialog_act ?? a?.dialogue_acts ?? {} };
      });
      const dialogue: ConvlabDialogue = { log };
      const id = bareId(d.dialogue_id);
      for (let ti = 0; ti < d.turns.length; ti++) {
        const t = d.turns[ti];
        if (!isTurnObject(t)) {
          collector.reject(new InputError('wrong dataset format: turn is not an object {turn_id, speaker, utterance}', { file, where: turnId(id, ti) }));
          continue;
        }
        if (t.speaker === 'USER') continue;
        if (t.speaker !== 'SYSTEM') {
          // As for SGD: "system" or a missing speaker would drop the turn without a word.
          collector.reject(new InputError(`speaker must be "USER" or "SYSTEM", got ${JSON.stringify(t.speaker)}`, { file, where: turnId(id, ti) }));
          continue;
        }
        if (limit !== undefined && turns.length >= limit) return turns;
        const turn = collector.guard(() => {
          if (!dialogueActs) throw new InputError(`dialogue has no entry in ${path.basename(actsFile)}`, { file, where: id });
          return multiwozSystemTurn(dialogue, id, ti, schema, map, file, turnId(id, ti));
        });
        if (turn) turns.push(turn);
      }
    }
  }
  return turns;
}

/**
 * Checks that a conversation has what the evaluator reads, so a malformed one fails with one line
 * naming the dialogue and turn instead of a crash deep inside the metric.
 */
import { InputError } from '../../util/errors.js';
import { DOMAIN_CONSTRAINT_GOAL_KEYS, GOAL_DOMAINS, REQUEST_ACTS } from './acts.js';
import type { Dialogue } from './types.js';

/** Services a frame may name besides goal domains (MultiWOZ's booking, general and bus). */
export const EXTRA_SERVICES = ['booking', 'general', 'bus'];

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function checkActions(
  actions: unknown,
  fail: (msg: string) => never,
  service: string,
  requireInformValues: boolean,
): void {
  if (actions === undefined) return;
  if (!Array.isArray(actions)) fail(`frame ${service}: actions must be a list`);
  for (const a of actions as unknown[]) {
    if (!isObject(a) || typeof a.act !== 'string' || a.act === '') fail(`frame ${service}: action without an act name`);
    const act = a.act as string;
    const slot = a.slot;
    if (slot !== undefined && slot !== null && typeof slot !== 'string') fail(`act ${act}: slot must be a string`);
    const values = a.values;
    if (values !== undefined && (!Array.isArray(values) || values.some((v) => typeof v !== 'string'))) {
      fail(`act ${act}: values must be a list of strings`);
    }
    const hasValues = Array.isArray(values) && values.length > 0;
    // a slotless Inform is a domain intent ("I want an attraction") and carries nothing to score;
    // values without a slot, or a request without a slot, cannot be read
    if (!slot && hasValues) fail(`act ${act} without slot (values ${JSON.stringify(values)})`);
    if (!slot && REQUEST_ACTS.some((p) => p.test(act))) fail(`act ${act} without slot`);
    if (requireInformValues && slot && !hasValues && /inform/i.test(act)) fail(`act ${act} slot ${slot} without value`);
  }
}

function checkFrames(frames: unknown, fail: (msg: string) => never, services: Set<string>, user: boolean, nlu: boolean): void {
  if (frames === undefined) return;
  if (!Array.isArray(frames)) fail(`${nlu ? 'nlu ' : ''}frames must be a list`);
  for (const f of frames as unknown[]) {
    if (!isObject(f) || typeof f.service !== 'string') fail(`${nlu ? 'nlu ' : ''}frame without a service`);
    const service = f.service as string;
    if (!services.has(service)) fail(`unknown domain ${JSON.stringify(service)}${nlu ? ' in nlu' : ''}`);
    checkActions(f.actions, fail, service, !nlu);
    if (user && !nlu) {
      const req = isObject(f.state) ? f.state.requested_slots : undefined;
      if (req !== undefined && (!Array.isArray(req) || req.some((r) => typeof r !== 'string'))) {
        fail(`frame ${service}: requested_slots must be a list of strings`);
      }
    }
  }
}

/**
 * Throws InputError (file, `dialogue ID turn N`) for the first problem found. `extraServices` are
 * service names (e.g. from the directory's schema.json) accepted in frames besides the MultiWOZ ones.
 */
export function validateDialogue(raw: unknown, file: string, position: number, extraServices: string[] = []): Dialogue {
  const id = isObject(raw) && typeof raw.dialogue_id === 'string' ? raw.dialogue_id : `#${position}`;
  const failAt = (where: string) => (msg: string): never => {
    throw new InputError(msg, { file, where });
  };
  const failDialogue = failAt(`dialogue ${id}`);
  if (!isObject(raw)) failDialogue('dialogue must be an object');
  const d = raw as Record<string, unknown>;
  if (typeof d.dialogue_id !== 'string') failDialogue('missing dialogue_id');
  if (d.goal === undefined || d.goal === null) failDialogue('missing goal');
  if (!isObject(d.goal)) failDialogue('goal must be an object of domain -> sub-goals');
  for (const [domain, dg] of Object.entries(d.goal as Record<string, unknown>)) {
    if (!GOAL_DOMAINS.includes(domain)) failDialogue(`unknown domain ${JSON.stringify(domain)} in goal`);
    if (!isObject(dg)) failDialogue(`goal.${domain} must be an object`);
    for (const key of DOMAIN_CONSTRAINT_GOAL_KEYS) {
      const sub = (dg as Record<string, unknown>)[key];
      if (sub === undefined) continue;
      if (!isObject(sub)) failDialogue(`goal.${domain}.${key} must be an object of slot -> value`);
      for (const [slot, v] of Object.entries(sub as Record<string, unknown>)) {
        if (typeof v !== 'string' && typeof v !== 'number') failDialogue(`goal.${domain}.${key}.${slot} must be a string`);
      }
    }
    const reqt = (dg as Record<string, unknown>).reqt;
    if (reqt !== undefined && !isObject(reqt) && !(Array.isArray(reqt) && reqt.every((r) => typeof r === 'string'))) {
      failDialogue(`goal.${domain}.reqt must be an object or a list of slots`);
    }
  }
  if (!Array.isArray(d.turns)) failDialogue('missing turns');
  const services = new Set([...GOAL_DOMAINS, ...EXTRA_SERVICES, ...extraServices]);
  (d.turns as unknown[]).forEach((t, i) => {
    const turnId = isObject(t) && t.turn_id !== undefined ? String(t.turn_id) : String(i);
    const fail = failAt(`dialogue ${id} turn ${turnId}`);
    if (!isObject(t)) fail('turn must be an object');
    const turn = t as Record<string, unknown>;
    // turn indices are rebuilt from the alternation, as in the reference
    const expected = i % 2 === 0 ? 'USER' : 'SYSTEM';
    if (turn.speaker !== expected) fail(`expected a ${expected} turn (turns must alternate, starting with USER)`);
    if (turn.utterance !== undefined && typeof turn.utterance !== 'string') fail('utterance must be a string');
    checkFrames(turn.frames, fail, services, expected === 'USER', false);
    if (turn.nlu !== undefined) {
      if (!isObject(turn.nlu)) fail('nlu must be an object with frames');
      checkFrames((turn.nlu as Record<string, unknown>).frames, fail, services, expected === 'USER', true);
    }
  });
  return raw as Dialogue;
}

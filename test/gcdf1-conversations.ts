/**
 * Builders for small hand-written GCDF1 conversations in the SGD-with-goal format. Acts are written
 * as [act, slot?, value?] (`Restaurant-Inform`, `food`, `indian`); the service is the act's prefix.
 * User request acts also fill the frame's requested_slots; system turns get a perfect NLU of the
 * preceding user turn unless one is given.
 */
import type { Action, Dialogue, Frame, Goal, Turn } from '../src/metrics/gcdf1/types.js';

export type ActSpec = [string, string?, string?];

function serviceOf(act: string): string {
  return act.split('-')[0].toLowerCase();
}

function toFrames(acts: ActSpec[], user: boolean): Frame[] {
  const frames = new Map<string, Frame>();
  for (const [act, slot, value] of acts) {
    const service = serviceOf(act);
    let frame = frames.get(service);
    if (!frame) {
      frame = { service, actions: [], ...(user ? { state: { requested_slots: [] } } : {}) };
      frames.set(service, frame);
    }
    const action: Action = { act };
    if (slot !== undefined) action.slot = slot;
    if (value !== undefined) action.values = [value];
    else if (slot !== undefined && /request/i.test(act)) action.values = ['?'];
    frame.actions!.push(action);
    if (user && /request/i.test(act) && slot) frame.state!.requested_slots!.push(`${service}-${slot}`);
  }
  return [...frames.values()];
}

export interface TurnSpec {
  speaker: 'USER' | 'SYSTEM';
  acts: ActSpec[];
  /** what the listener understood; system default: the user's inform and request acts */
  nlu?: ActSpec[];
  text?: string;
}

export const user = (acts: ActSpec[], text = ''): TurnSpec => ({ speaker: 'USER', acts, text });
export const system = (acts: ActSpec[], nlu?: ActSpec[], text = ''): TurnSpec => ({ speaker: 'SYSTEM', acts, nlu, text });

export function conversation(goal: Goal, turns: TurnSpec[], id = 'TEST0001.json'): Dialogue {
  const out: Turn[] = turns.map((t, i) => {
    const previous = turns[i - 1];
    const nluActs =
      t.nlu ??
      (t.speaker === 'SYSTEM' && previous ? previous.acts.filter(([act]) => /inform|request/i.test(act)) : []);
    return {
      speaker: t.speaker,
      turn_id: String(i),
      utterance: t.text ?? '',
      frames: toFrames(t.acts, t.speaker === 'USER'),
      nlu: { frames: toFrames(nluActs, false) },
    };
  });
  return { dialogue_id: id, goal, turns: out };
}

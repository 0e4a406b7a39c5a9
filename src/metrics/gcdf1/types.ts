/** SGD-format conversation as produced by the GCDF1 convlab conversion (goal per dialogue, nlu per turn). */
export interface Action {
  act: string;
  slot?: string | null;
  values?: string[];
}

export interface Frame {
  service: string;
  actions?: Action[];
  state?: { requested_slots?: string[]; active_intent?: string; slot_values?: Record<string, string[]> };
}

export interface Turn {
  speaker: string;
  turn_id?: string;
  utterance?: string;
  frames?: Frame[];
  nlu?: { frames?: Frame[] };
}

/** Per domain: constraints under info/book/fail_info/fail_book, requests under reqt. */
export type DomainGoal = Record<string, unknown> & {
  info?: Record<string, string>;
  book?: Record<string, string>;
  fail_info?: Record<string, string>;
  fail_book?: Record<string, string>;
  reqt?: Record<string, string> | string[];
};

export type Goal = Record<string, DomainGoal>;

export interface Dialogue {
  dialogue_id: string;
  goal: Goal;
  turns: Turn[];
}

/** service -> action parameter (`slot===value` or a slot) -> turn indices where it occurs. */
export type ParamsByService = Map<string, Map<string, number[]>>;

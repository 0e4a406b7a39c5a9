/** One dialogue action of a system turn, normalised across datasets. */
export interface DialogueAction {
  /** Service (SGD service name, or MultiWOZ 2.2 service such as "restaurant"). */
  service: string;
  /** Dataset act name as written in the data (SGD: INFORM, MultiWOZ: Inform, ...). */
  act: string;
  /** Schema slot name ("" for acts without a slot: GOODBYE, REQ_MORE, bye ...). */
  slot: string;
  values: string[];
  /** SGD canonical values where the dataset gives them. */
  canonicalValues?: string[];
  /**
   * The intent the act belongs to, when the data tells (SGD: the user's active intent for this
   * service; OFFER_INTENT: its value). NOTIFY_SUCCESS/FAILURE references are phrased from it.
   */
  intent?: string;
  /** The act exactly as the source wrote it when `act` is normalised (MultiWOZ "Booking-Book"). */
  sourceAct?: string;
}

/** A system turn: the unit that references, SER and SGSAcc work on. */
export interface Turn {
  /** `<dialogue_id>/<turn_index>`, turn_index being the position in the dialogue's turns/log. */
  id: string;
  dialogueId: string;
  turnIndex: number;
  dataset: 'sgd' | 'multiwoz' | 'generic';
  services: string[];
  actions: DialogueAction[];
  /** Ground-truth system utterance ("" when the source has none). */
  utterance: string;
  previousUserUtterance: string;
}

export function turnId(dialogueId: string, turnIndex: number): string {
  return `${dialogueId}/${turnIndex}`;
}

/**
 * The context-augmented premise of the paper's Figure 1: "I want to book a hair cut. the name of
 * the hair stylist. What about Queens?" — previous user turn, then the slot description closed
 * as a sentence, then the utterance. Empty parts are dropped so the premise never starts with a
 * stray period.
 */
export function contextPremise(previousUserUtterance: string, slotDescription: string, utterance: string): string {
  const parts = [previousUserUtterance.trim(), sentence(slotDescription), utterance.trim()];
  return parts.filter((p) => p !== '').join(' ');
}

/** The text closed as a sentence (a period unless it ends in . ! or ?); '' stays ''. */
export function sentence(text: string): string {
  const t = text.trim();
  if (t === '') return '';
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/**
 * The context premise without the utterance: what the context alone says. When it entails the
 * reference too, a context rescue credits the utterance for nothing (the context-only control).
 */
export function controlPremise(previousUserUtterance: string, slotDescription: string): string {
  return contextPremise(previousUserUtterance, slotDescription, '');
}

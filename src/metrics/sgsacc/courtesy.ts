/**
 * Courtesy and dialogue-management sentences ("Is there anything else?", "You're welcome.",
 * "Sure.") carry no fact, so no fact can support them: checked against the facts they would all
 * come out unsupported. They are recognised by rule instead and reported as `courtesy`, never as
 * hallucinations. The rule (docs/sgsacc.md, "Sentence granularity"):
 *
 * 1. the sentence, normalised (lower case, punctuation dropped, spaces collapsed), equals a
 *    reference of one of the turn's generic acts (the content-free acts of isContentFreeAct:
 *    GOODBYE, REQ_MORE, greetings, thanks; their references are rules/general.json's fixed
 *    sentences), or
 * 2. the normalised sentence matches one of COURTESY_PATTERNS as a whole, and it has no digit and
 *    none of the turn's slot values: "Sure, your table at 7 pm is booked." is not courtesy.
 */

export type CourtesyKind = 'generic-act' | 'acknowledgement' | 'greeting' | 'thanks' | 'welcome' | 'anything-else' | 'goodbye' | 'wait' | 'confirm-question';

/** The documented list: whole-sentence patterns over the normalised sentence. */
export const COURTESY_PATTERNS: readonly { kind: Exclude<CourtesyKind, 'generic-act'>; pattern: RegExp }[] = [
  // "Yes." and "No." are left out on purpose: they answer questions (a boolean slot's value).
  { kind: 'acknowledgement', pattern: /^(sure( thing)?|okay|ok|alright|all right|certainly|of course|no problem|got it|i see|absolutely|great|perfect|sounds good|very well|understood|will do|no worries)$/ },
  { kind: 'greeting', pattern: /^(hi|hello|hey|good (morning|afternoon|evening))( there)?$/ },
  { kind: 'thanks', pattern: /^(thanks|thank you)( (so|very) much)?( for (using|calling|contacting|choosing) (our|my|the) service(s)?| for your (patience|time))?$/ },
  { kind: 'welcome', pattern: /^((you're|you are|your) (very |most )?welcome|my pleasure|(i'm |i am )?(glad|happy) (to|i could|i was able to) help( you)?|anytime|no problem at all)$/ },
  {
    kind: 'anything-else',
    pattern:
      /^((is there|was there) )?anything (else|more)( (i can|can i|that i can|i may) (do|help|assist)( you)?( with)?( for you)?( today)?| (you need|you'd like|you would like)( help with)?)?$|^(what|how) else can i (do|help|assist)( you)?( with)?( for you)?( today)?$|^(can|may|could|shall) i (help|assist|do) (you )?(with )?(anything else|something else|anything more|further)( for you)?( today)?$|^(do|would) you (need|like|want) (help with |me to do )?anything else$|^(is there )?anything else (i can help you with|for you)( today)?$/,
  },
  {
    kind: 'goodbye',
    pattern:
      /^(have a (good|great|nice|wonderful|pleasant|lovely|fantastic) (day|evening|night|one|time|trip|meal|stay|weekend|flight|ride|show)( ahead)?|bye( bye)?|goodbye|see you( later| soon)?|take care|enjoy|enjoy (your|the) (day|meal|stay|trip|time|evening|show|movie|event|ride|flight|visit|dinner|lunch|concert|game|appointment)|bon appetit)$/,
  },
  // The closing question of a CONFIRM turn: it asks, it states nothing (the facts before it do).
  { kind: 'confirm-question', pattern: /^((is|are) (that|this|these|those|everything|all of that|all that|the details) (correct|right|ok|okay|alright|accurate)( for you)?|(can|could|would) you (please )?confirm( that| this| the details)?|please confirm( that| this| the details)?|(does|do) (that|this|these) (sound|look|seem) (good|right|correct|ok|okay)( to you)?|right)$/ },
  { kind: 'wait', pattern: /^(let me (check|see|look)( (that|it|this))?( for you| on that| up)?|one moment( please)?|just a (moment|second|sec)|please (wait|hold)( a moment)?)$/ },
];

/** Lower case, punctuation dropped (apostrophes kept, curly ones made straight), spaces collapsed. */
export function normaliseCourtesy(sentence: string): string {
  return sentence
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^a-z0-9' ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The courtesy kind of a sentence, or null when it is not one. `genericReferences`: the references
 * of the turn's generic (content-free) acts; `values`: the turn's slot values.
 */
export function courtesyKind(sentence: string, genericReferences: readonly string[] = [], values: readonly string[] = []): CourtesyKind | null {
  const norm = normaliseCourtesy(sentence);
  if (norm === '') return null;
  if (genericReferences.some((r) => normaliseCourtesy(r) === norm)) return 'generic-act';
  if (/\d/.test(norm)) return null;
  const lower = sentence.toLowerCase();
  if (values.some((v) => v.trim().length > 1 && lower.includes(v.trim().toLowerCase()))) return null;
  for (const { kind, pattern } of COURTESY_PATTERNS) if (pattern.test(norm)) return kind;
  // "Okay, anything else?": an acknowledgement in front of another courtesy sentence.
  const rest = norm.replace(LEADING_ACK, '');
  if (rest !== norm && rest !== '') for (const { kind, pattern } of COURTESY_PATTERNS) if (pattern.test(rest)) return kind;
  return null;
}

const LEADING_ACK = /^(sure|okay|ok|alright|all right|great|perfect|certainly|of course|no problem|absolutely) /;

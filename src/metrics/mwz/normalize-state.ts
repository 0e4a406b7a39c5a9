/**
 * Dialogue-state normalization with mwzeval's rules (mwzeval/normalization.py): slot names are
 * lower-cased without spaces (arriveby -> arrive, leaveat -> leave) and values of names, venue
 * types, food types, times and parking/internet are mapped to the surface forms the database uses.
 * Every Inform/Success and DST figure depends on these rules, so they follow the reference
 * one-to-one, including its quirks (e.g. "by" strips three characters).
 */

export type DomainState = Record<string, string>;
/** domain -> slot -> value */
export type BeliefState = Record<string, DomainState>;

/** Values that mean "no constraint" in a state; the database ignores them. */
export const DONTCARE_VALUES = new Set([
  'dontcare',
  'not mentioned',
  "don't care",
  'dont care',
  'do n\'t care',
  'do not care',
]);

export function normalizeStateSlotName(slot: string): string {
  const s = slot.toLowerCase().replaceAll(' ', '');
  if (s === 'arriveby') return 'arrive';
  if (s === 'leaveat') return 'leave';
  return s;
}

/**
 * The table's own entry for a predicted value, as a Python dict lookup: a plain `table[key]` also
 * finds Object.prototype's members, so a value such as "constructor" or "toString" came back as a
 * function and broke DST and the database query.
 */
function canon(table: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

const TYPE_CANON: Record<string, string> = {
  'swimming pool': 'swimmingpool',
  'mutliple sports': 'multiple sports',
  'night club': 'nightclub',
  'guest house': 'guesthouse',
};

// Surface forms of venue names seen in MultiWOZ states that miss the database spelling.
const RESTAURANT_NAMES: Record<string, string> = {
  'hotel du vin bistro': 'hotel du vin and bistro',
  'the river bar and grill': 'the river bar steakhouse and grill',
  "nando's": 'nandos',
  'city center b and b': 'city center north b and b',
  'acorn house': 'acorn guest house',
  'caffee uno': 'caffe uno',
  'cafe uno': 'caffe uno',
  "rosa's": 'rosas bed and breakfast',
  'restaurant called two two': 'restaurant two two',
  'restaurant 2 two': 'restaurant two two',
  'restaurant two 2': 'restaurant two two',
  'restaurant 2 2': 'restaurant two two',
  'restaurant 1 7': 'restaurant one seven',
  'restaurant 17': 'restaurant one seven',
};
const HOTEL_NAMES: Record<string, string> = {
  'lime house': 'limehouse',
  cityrooms: 'cityroomz',
  'whale of time': 'whale of a time',
  'huntingdon hotel': 'huntingdon marriott hotel',
  'holiday inn exlpress, cambridge': 'express by holiday inn cambridge',
  'university hotel': 'university arms hotel',
  'arbury guesthouse and lodge': 'arbury lodge guesthouse',
  'bridge house': 'bridge guest house',
  'arbury guesthouse': 'arbury lodge guesthouse',
  'nandos in the city centre': 'nandos city centre',
};
const ATTRACTION_NAMES: Record<string, string> = {
  'broughton gallery': 'broughton house gallery',
  'scudamores punt co': 'scudamores punting co',
  'cambridge botanic gardens': 'cambridge university botanic gardens',
  'the junction': 'junction theatre',
  'trinity street college': 'trinity college',
  'christ college': "christ's college",
  christs: "christ's college",
  'history of science museum': 'whipple museum of the history of science',
  'parkside pools': 'parkside swimming pool',
  'the botanical gardens at cambridge university': 'cambridge university botanic gardens',
  'cafe jello museum': 'cafe jello gallery',
};

export function nameToCanonical(raw: string): string {
  let name = pyStrip(raw).toLowerCase();
  name = name.replaceAll(' & ', ' and ').replaceAll('&', ' and ').replaceAll(" '", "'");
  return canon(RESTAURANT_NAMES, name) ?? canon(HOTEL_NAMES, name) ?? canon(ATTRACTION_NAMES, name) ?? name;
}

const FOOD_CANON: Record<string, string> = {
  eriterean: 'mediterranean',
  brazilian: 'portuguese',
  'sea food': 'seafood',
  portugese: 'portuguese',
  'modern american': 'north american',
  americas: 'north american',
  intalian: 'italian',
  italain: 'italian',
  'asian or oriental': 'asian',
  english: 'british',
  australasian: 'australian',
  gastropod: 'gastropub',
  brutish: 'british',
  bristish: 'british',
  europeon: 'european',
};

export function foodToCanonical(raw: string): string {
  const food = pyStrip(raw).toLowerCase();
  return canon(FOOD_CANON, food) ?? food;
}

const FIXED_TIMES: Record<string, string> = {
  afternoon: '13:00',
  lunch: '12:00',
  noon: '12:00',
  'mid-day': '12:00',
  'around lunch time': '12:00',
  morning: '08:00',
  'seven o\'clock tomorrow evening': '07:00',
  'three forty five p.m': '15:45',
  'one thirty p.m.': '13:30',
  'six fourty five': '06:45',
  'eight thirty': '08:30',
};

const isDigits = (s: string): boolean => /^\d+$/.test(s);
/** Python's int() accepts surrounding whitespace and a sign; anything else made mwzeval crash. */
const pyInt = (s: string): number | undefined => (/^\s*[+-]?\d+\s*$/.test(s) ? parseInt(s.trim(), 10) : undefined);
const zfill2 = (s: string): string => (s.length >= 2 ? s : '0'.repeat(2 - s.length) + s);
/** Python's str.strip() without arguments strips all whitespace, as does JS trim for our inputs. */
function pyStrip(s: string): string {
  return s.trim();
}

/** Time strings to the database's HH:MM form ("4pm" -> "16:00", "1145" -> "11:45"). */
export function timeToCanonical(raw: string): string {
  let time = pyStrip(raw).toLowerCase();
  const fixed = canon(FIXED_TIMES, time);
  if (fixed !== undefined) return fixed;
  if (time.startsWith("one o'clock p.m")) return '13:00';
  if (time.startsWith("ten o'clock a.m")) return '10:00';

  if (time.startsWith('by')) time = time.slice(3);
  if (time.startsWith('after')) time = time.slice(5).trim();
  if (time.startsWith('afer')) time = time.slice(4).trim();
  if (time.endsWith('am')) time = time.slice(0, -2).trim();
  if (time.endsWith('a.m.')) time = time.slice(0, -4).trim();

  if (time.endsWith('pm') || time.endsWith('p.m.')) {
    if (time.endsWith('pm')) time = time.slice(0, -2).trim();
    if (time.endsWith('p.m.')) time = time.slice(0, -4).trim();
    const tokens = time.split(':');
    if (tokens.length === 2) {
      const h = pyInt(tokens[0]);
      // mwzeval raises here; we keep the string so one odd state value cannot abort a run.
      if (h !== undefined) return `${h + 12}:${tokens[1]}`;
    }
    if (tokens.length === 1 && isDigits(tokens[0])) return `${parseInt(tokens[0], 10) + 12}:00`;
  }

  if (time.length === 0) return '00:00';
  const last = time[time.length - 1];
  if (last === '.' || last === ',' || last === '?') time = time.slice(0, -1);
  if (isDigits(time) && time.length === 4) return `${time.slice(0, 2)}:${time.slice(2)}`;
  if (isDigits(time)) return `${zfill2(time)}:00`;
  if (time.includes(':')) time = time.split(' ').join('');
  if (time.length === 4 && time[1] === ':') {
    const [h, m] = time.split(':');
    return `${zfill2(h)}:${m}`;
  }
  return time;
}

/** Value normalization keyed by the (already normalized) slot name, as mwzeval does. */
export function normalizeStateSlotValue(slot: string, value: string): string {
  switch (slot) {
    case 'name':
    case 'destination':
    case 'departure':
      return nameToCanonical(value);
    case 'type':
      return canon(TYPE_CANON, value) ?? value;
    case 'food':
      return foodToCanonical(value);
    case 'arrive':
    case 'leave':
    case 'arriveby':
    case 'leaveat':
    case 'time':
      return timeToCanonical(value);
    case 'parking':
    case 'internet':
      return value === 'free' ? 'yes' : value;
    default:
      return value;
  }
}

/** Minutes since midnight of "HH:MM..." (prefix match, as Python's re.match), else 0. */
export function timeStrToMinutes(time: string): number {
  if (!/^[0-9][0-9]:[0-9][0-9]/.test(time)) return 0;
  const [h, m] = time.split(':');
  return parseInt(h, 10) * 60 + parseInt(m, 10);
}

/** Normalize every slot name and value of a state; returns a new object. */
export function normalizeState(state: BeliefState): BeliefState {
  const out: BeliefState = {};
  for (const [domain, slots] of Object.entries(state)) {
    const d: DomainState = {};
    for (const [slot, value] of Object.entries(slots)) {
      const s = normalizeStateSlotName(slot);
      d[s] = normalizeStateSlotValue(s, value);
    }
    out[domain] = d;
  }
  return out;
}

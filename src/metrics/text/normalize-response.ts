/**
 * Normalization of system responses before BLEU and richness, as mwzeval's `normalize_data` does
 * it: lower-case, map every slot placeholder style (`[value_name]`, `[restaurant_name]`,
 * `[hotel_phone]-s`, ...) onto the unified 18-slot ontology of "Shades of BLEU" (bare upper-case
 * names like NAME, PHONE), drop "-s" and "-ly" fragments, then Moses tokenize + detokenize so
 * spacing around punctuation no longer depends on each system's own tokenization.
 */
import { mosesDetokenize, mosesTokenize } from './moses.js';
import { PY_WS_CLASS } from './py-string.js';

/** Unified slot name -> every placeholder name (lower-case) that maps to it. */
export const UNIFIED_SLOT_NAMES: Readonly<Record<string, readonly string[]>> = {
  ADDRESS: ['address', 'attraction_address', 'hospital_address', 'hotel_address', 'police_address', 'restaurant_address', 'value_address'],
  AREA: ['area', 'value_area', 'attraction_area', 'restaurant_area', 'hotel_area'],
  TIME: [
    'booktime', 'value_time', 'time', 'duration', 'value_duration', 'train_duration', 'arriveby', 'taxi_arriveby',
    'value_arrive', 'arrive by', 'train_arriveby', 'leaveat', 'value_leave', 'leave at', 'train_leaveat',
    'train_leave', 'train_arrive', 'taxi_leaveat',
  ],
  DAY: ['day', 'value_day', 'bookday', 'train_day'],
  PLACE: [
    'destination', 'value_destination', 'departure', 'value_departure', 'value_place', 'train_departure',
    'train_destination', 'taxi_destination', 'taxi_departure',
  ],
  FOOD: ['food', 'value_food', 'restaurant_food'],
  NAME: ['name', 'attraction_name', 'hospital_name', 'hotel_name', 'police_name', 'restaurant_name', 'value_name'],
  PHONE: ['phone', 'attraction_phone', 'hospital_phone', 'hotel_phone', 'police_phone', 'restaurant_phone', 'taxi_phone', 'value_phone'],
  POST: ['postcode', 'attraction_postcode', 'hospital_postcode', 'hotel_postcode', 'restaurant_postcode', 'value_postcode', 'police_postcode'],
  PRICE: [
    'price', 'value_price', 'entrancefee', 'entrance fee', 'train_price', 'attraction_entrancefee', 'pricerange',
    'value_pricerange', 'price range', 'restaurant_pricerange', 'hotel_pricerange', 'attraction_pricerange',
    'attraction_price',
  ],
  REFERENCE: ['ref', 'attraction_reference', 'hotel_reference', 'restaurant_reference', 'train_reference', 'value_reference', 'reference'],
  COUNT: [
    'stars', 'value_stars', 'hotel_stars', 'bookstay', 'value_stay', 'stay', 'bookpeople', 'value_people', 'people',
    'choice', 'value_choice', 'value_count', 'attraction_choice', 'hotel_choice', 'restaurant_choice', 'train_choice',
  ],
  TYPE: ['type', 'taxi_type', 'taxi_car', 'value_type', 'value_car', 'car', 'restaurant_type', 'hotel_type', 'attraction_type'],
  TRAINID: ['trainid', 'train_id', 'value_id', 'id', 'train', 'train_trainid'],
  INTERNET: ['internet', 'hotel_internet'],
  PARKING: ['parking', 'hotel_parking'],
  ID: ['hospital_id', 'attraction_id', 'restaurant_id'],
  DEPARTMENT: ['value_department', 'department', 'hospital_department'],
  OPEN: ['openhours'],
};

const SLOT_LOOKUP = new Map<string, string>(
  Object.entries(UNIFIED_SLOT_NAMES).flatMap(([unified, names]) => names.map((n) => [n, unified] as const)),
);

/** The unified slot name for a placeholder name (case-insensitive), or undefined when unknown. */
export function normalizeSlotName(name: string): string | undefined {
  return SLOT_LOOKUP.get(name.toLowerCase());
}

// A placeholder is word characters and spaces in brackets, optionally followed by a plural
// suffix that is swallowed with it ("[value_name]s", "[hotel_name]-s").
const PLACEHOLDER = new RegExp(`\\[([\\p{L}\\p{N}_${PY_WS_CLASS}]+)\\](es|s|-s|-es|)`, 'gu');

export interface NormalizedResponse {
  text: string;
  /** Placeholder names (lower-cased, as written) with no unified slot; mwzeval deletes them. */
  unknownPlaceholders: string[];
}

/**
 * Normalize one response like mwzeval. Unknown placeholders are removed from the text (mwzeval
 * replaces them with the empty string after printing a warning) and listed so the caller can warn
 * with dialogue and turn.
 */
export function normalizeResponse(text: string): NormalizedResponse {
  const unknownPlaceholders: string[] = [];
  let out = text.toLowerCase().replace(PLACEHOLDER, (_m, name: string) => {
    const unified = normalizeSlotName(name);
    if (unified === undefined) {
      unknownPlaceholders.push(name);
      return '';
    }
    return unified;
  });
  out = out.replaceAll('-s', '').replaceAll('-ly', '');
  return { text: mosesDetokenize(mosesTokenize(out)), unknownPlaceholders };
}

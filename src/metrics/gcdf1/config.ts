import yaml from 'js-yaml';
import { InputError } from '../../util/errors.js';
import { readTextFile } from '../../util/json-file.js';

/** The evaluator configuration, in the shape of the reference's multiwoz_user_evaluator.yaml. */
export interface Gcdf1Config {
  use_lowercase: boolean;
  igcd_f1: {
    repetitions_warning: number;
    repetitions: {
      count_fp: boolean;
      max_repetitions: number;
      sys_behaviours: { requests: boolean; booking_failure_response: boolean; no_offers: boolean; nlu: boolean };
      user_behaviours: {
        offer_checks: boolean;
        repeats_while_requesting_info: boolean;
        repeats_while_booking: boolean;
        repeats_when_answering_request: boolean;
        proposes_multiple_domains: boolean;
      };
    };
    constraints_not_in_goal: {
      sys_checks: {
        offers: boolean;
        requests: boolean;
        booking_failure_response: boolean;
        booking_request_response: boolean;
        recommendations: boolean;
        sys_context_size: number;
      };
      max_repetitions: number;
      auto_matching: {
        max_repetions_matched: number;
        slots: Record<string, string[]>;
        vals: string[];
        slot_value_pairs: Record<string, Record<string, string[]>>;
      };
      max_user_responses: number;
    };
    empty_db_result: { compensate_request: boolean; compensate_missed_constraints: boolean };
    compensate_preemption: boolean;
    value_matching: { use_fuzzy_match: boolean; fuzzy_match_threshold: number; use_canonical_map: boolean };
    multiple_values_for_slot_in_turn: { merge: boolean };
  };
  rgcd_f1: {
    repetitions_warning: number;
    repetitions: {
      count_fp: boolean;
      system_behaviour: { validate_nlu: boolean; validate_policy: boolean };
      repeats_to_penalty: number;
    };
    missing_requests: { system_provision: boolean; provision_domains: string[] };
    auto_add_to_ref: string[];
  };
}

/** The values of the configuration used for the published results (multiwoz_user_evaluator.yaml). */
export function defaultConfig(): Gcdf1Config {
  return {
    use_lowercase: true,
    igcd_f1: {
      repetitions_warning: 4,
      repetitions: {
        count_fp: true,
        max_repetitions: 6,
        sys_behaviours: { requests: true, booking_failure_response: true, no_offers: true, nlu: true },
        user_behaviours: {
          offer_checks: true,
          repeats_while_requesting_info: true,
          repeats_while_booking: true,
          repeats_when_answering_request: true,
          proposes_multiple_domains: true,
        },
      },
      constraints_not_in_goal: {
        sys_checks: {
          offers: true,
          requests: false,
          booking_failure_response: true,
          booking_request_response: true,
          recommendations: true,
          sys_context_size: 2,
        },
        max_repetitions: 6,
        auto_matching: {
          max_repetions_matched: 6,
          slots: { taxi: ['departure', 'destination'] },
          vals: ['dontcare'],
          slot_value_pairs: {},
        },
        max_user_responses: 6,
      },
      empty_db_result: { compensate_request: true, compensate_missed_constraints: true },
      compensate_preemption: true,
      value_matching: { use_fuzzy_match: true, fuzzy_match_threshold: 0.9, use_canonical_map: true },
      multiple_values_for_slot_in_turn: { merge: false },
    },
    rgcd_f1: {
      repetitions_warning: 4,
      repetitions: {
        count_fp: true,
        system_behaviour: { validate_nlu: true, validate_policy: true },
        repeats_to_penalty: 3,
      },
      missing_requests: {
        system_provision: true,
        provision_domains: ['taxi', 'restaurant', 'hotel', 'attraction', 'train'],
      },
      auto_add_to_ref: ['restaurant-ref', 'hotel-ref', 'train-ref', 'train-Ref', 'ref'],
    },
  };
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * Overlay `user` on `base`, key by key, rejecting keys the evaluator does not know and values of the
 * wrong type, so a typo in the YAML fails loudly instead of silently using a default.
 */
function overlay(base: Record<string, unknown>, user: Record<string, unknown>, file: string, at: string[]): void {
  for (const [key, value] of Object.entries(user)) {
    const where = [...at, key].join('.');
    // paths the reference fills in itself from flags or top-level settings
    if (key === 'use_lowercase' && at.length > 0) continue;
    if (key === 'canonical_map_path') continue;
    if (!(key in base)) throw new InputError(`unknown configuration key ${where}`, { file });
    const current = base[key];
    if (isPlainObject(current) && !['slots', 'slot_value_pairs'].includes(key)) {
      if (!isPlainObject(value)) throw new InputError(`${where} must be a mapping`, { file });
      overlay(current, value, file, [...at, key]);
    } else if (Array.isArray(current)) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
        throw new InputError(`${where} must be a list of strings`, { file });
      }
      base[key] = value;
    } else if (isPlainObject(current)) {
      base[key] = value ?? {};
    } else {
      if (typeof value !== typeof current) throw new InputError(`${where} must be a ${typeof current}`, { file });
      base[key] = value;
    }
  }
}

/** Read a YAML configuration in the reference's shape; absent keys take the published defaults. */
export function loadConfig(file?: string): Gcdf1Config {
  const config = defaultConfig();
  if (!file) return config;
  const text = readTextFile(file);
  let parsed: unknown;
  try {
    parsed = yaml.load(text);
  } catch (e) {
    throw new InputError(`not valid YAML (${(e as Error).message.split('\n')[0]})`, { file });
  }
  if (parsed == null) return config;
  if (!isPlainObject(parsed)) throw new InputError('configuration must be a mapping', { file });
  overlay(config as unknown as Record<string, unknown>, parsed, file, []);
  return config;
}

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenize13a } from '../text/bleu-tokenizers.js';
import { normalizeResponse } from '../text/normalize-response.js';
import { pyRstrip } from '../text/py-string.js';

/**
 * The MultiWOZ references as mwzeval's BLEU scores them, derived once with the ground truth and kept
 * in its cache: normalizing 7,372 references (Moses both ways) and 13a-tokenizing them again was
 * about a sixth of every `todeval evaluate` run's CPU, and the same again for each call of the
 * Python Evaluator.
 */
export interface ScoredReferences {
  /** normalizeResponse's text of each reference: what BLEU, chrF and TER score. */
  text: string[];
  /** Each `text` as BLEU's default preprocessing leaves it (trailing whitespace stripped, then 13a). */
  tokens13a: string[];
}

/** References (delexicalized, raw case) as BLEU, chrF and TER score them. */
export function scoredReferences(references: readonly string[]): ScoredReferences {
  const text = references.map((r) => normalizeResponse(r).text);
  // What BleuReferences' preprocessing does with sacreBLEU's defaults (mixed case, 13a).
  return { text, tokens13a: text.map((t) => tokenize13a(pyRstrip(t))) };
}

const HERE = fileURLToPath(import.meta.url);
/**
 * The modules whose code decides these strings, relative to this file (a test checks that they are
 * this module's whole import closure in the project). Without extension: the same names are the
 * sources (.ts, run through tsx) or the build (.js, dist/).
 */
export const SCORED_REFERENCES_CODE: readonly string[] = ['./scored-references', '../text/normalize-response', '../text/moses', '../text/nonbreaking-prefixes-en', '../text/py-string', '../text/bleu-tokenizers'];

/** SCORED_REFERENCES_CODE's files as this process runs them: the sources or dist/'s build, as this module is. */
export const SCORED_REFERENCES_FILES: readonly string[] = SCORED_REFERENCES_CODE.map((m) => path.resolve(path.dirname(HERE), m + path.extname(HERE)));

/**
 * Read when this module is loaded, right after the modules it imports: the digest describes the
 * code that runs. Read later (at the first ground truth), a package upgraded under a running
 * process would name what the old code derives with the new code's digest, in a file every later
 * run of the new code trusts.
 */
const CODE_DIGEST = codeDigest();

function codeDigest(): string | null {
  const h = createHash('sha256');
  try {
    for (const f of SCORED_REFERENCES_FILES) h.update(readFileSync(f)).update('\0');
    return h.digest('hex').slice(0, 12);
  } catch {
    return null;
  }
}

/**
 * A digest of the code that derives scored references (the bytes of SCORED_REFERENCES_FILES when
 * this module was loaded), in the name of the file that keeps them beside the ground-truth cache:
 * what other code wrote (another version of todeval, an edited normalizer, the sources under tsx
 * beside the build) is never read as this code's. Null when a file cannot be read (the code bundled
 * elsewhere): they are then derived in every run, never cached.
 */
export function scoredReferencesCode(): string | null {
  return CODE_DIGEST;
}

import { existsSync } from 'node:fs';
import path from 'node:path';
import { LEXICAL_STANDIN, LEXICAL_STANDIN_MANIFEST } from './lexical-standin.js';
import { RANDOM_MODEL_MANIFEST } from './model-dir.js';
import { NULL_STANDIN, NULL_STANDIN_MANIFEST } from './null-standin.js';

/** The stand-in models this module builds; none of them is a language model. */
export type StandinKind = 'random' | typeof LEXICAL_STANDIN | typeof NULL_STANDIN;

/** Which stand-in a model directory holds (by the manifest its builder writes last), if any. */
export function standinKind(dir: string): StandinKind | undefined {
  if (existsSync(path.join(dir, LEXICAL_STANDIN_MANIFEST))) return LEXICAL_STANDIN;
  if (existsSync(path.join(dir, NULL_STANDIN_MANIFEST))) return NULL_STANDIN;
  if (existsSync(path.join(dir, RANDOM_MODEL_MANIFEST))) return 'random';
  return undefined;
}

/**
 * The model id a signature carries for a local directory: a stand-in's id always names what it is,
 * so its scores can never pass for a real model's.
 */
export function localModelId(dir: string): string {
  const name = path.basename(dir);
  const kind = standinKind(dir);
  // `models/lexical` (the docs' build-standin folder) is local:lexical-standin, not local:lexical-standin-lexical.
  if (kind && kind.startsWith(name)) return `local:${kind}`;
  if (kind && !name.includes(kind)) return `local:${kind}-${name}`;
  return `local:${name}`;
}

/** Whether a signature's model id names a stand-in (random weights, the lexical or the null stand-in). */
export function isStandinModelId(modelId: string): boolean {
  return modelId.includes(LEXICAL_STANDIN) || modelId.includes(NULL_STANDIN) || modelId.includes('random');
}

/** The stand-ins whose forward pass is a few table lookups per token, not a language model. */
const TABLE_LOOKUP_STANDINS: ReadonlySet<string> = new Set([LEXICAL_STANDIN, NULL_STANDIN]);

/** Is config.json's `todeval_standin` one of the table-lookup stand-ins (batched and waited on as such)? */
export function isTableLookupStandin(standin: string | undefined): boolean {
  return standin !== undefined && TABLE_LOOKUP_STANDINS.has(standin);
}

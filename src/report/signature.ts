import { createHash } from 'node:crypto';
import { fileBytes, STDIN } from '../util/json-file.js';
import path from 'node:path';
import { TODEVAL_VERSION } from '../version.js';

/**
 * The exact configuration behind a score, in the spirit of sacreBLEU's signature: two scores are
 * comparable only when their signatures are equal.
 */
export interface Signature {
  tool: string;
  version: string;
  [key: string]: string | number | boolean | null | undefined;
}

export function makeSignature(fields: Record<string, string | number | boolean | null | undefined>): Signature {
  return { tool: 'todeval', version: TODEVAL_VERSION, ...fields };
}

/** `tool:todeval|version:0.1.0|model:...`, keys in a fixed order so equal configs print equally. */
export function formatSignature(sig: Signature): string {
  const keys = ['tool', 'version', ...Object.keys(sig).filter((k) => k !== 'tool' && k !== 'version').sort()];
  return keys
    .filter((k) => sig[k] !== undefined)
    .map((k) => `${k}:${String(sig[k])}`)
    .join('|');
}

/** Short stable digest of a signature, for keying stored references and caches. */
export function signatureDigest(sig: Signature): string {
  return createHash('sha256').update(formatSignature(sig)).digest('hex').slice(0, 16);
}

/** A file as a signature names it: `<base name>@<first 12 hex of the sha256 of its bytes>`. */
export function fileSignature(file: string): string {
  const name = file === STDIN ? 'stdin' : path.basename(file);
  return `${name}@${createHash('sha256').update(fileBytes(file)).digest('hex').slice(0, 12)}`;
}

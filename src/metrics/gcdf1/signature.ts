import { createHash } from 'node:crypto';
import { makeSignature, type Signature } from '../../util/signature.js';

/** What decides a `todeval gcdf1` run's numbers: the resolved config (by content) and where it, the map and the dialogues came from. */
export interface Gcdf1Signed {
  /** The resolved config (loadConfig), hashed by its JSON. */
  config: unknown;
  /** The config file as a signature names a file (fileSignature), or `published-defaults`. */
  configFile: string;
  /** The canonical map file (fileSignature), or `none`. */
  canonicalMap: string;
  /** The dialogues: path relative to the data dir, `@`, their digest. */
  data: string;
  dialogues: number;
  skipped: number;
  limit?: number;
  shard?: string;
}

/** The signature of `todeval gcdf1` (a shard's carries its label; todeval merge writes the run's without it). */
export function gcdf1Signature(s: Gcdf1Signed): Signature {
  return makeSignature({
    metric: 'gcdf1',
    config: createHash('sha256').update(JSON.stringify(s.config)).digest('hex').slice(0, 12),
    configFile: s.configFile,
    canonicalMap: s.canonicalMap,
    data: s.data,
    dialogues: s.dialogues,
    skipped: s.skipped,
    limit: s.limit,
    shard: s.shard,
  });
}

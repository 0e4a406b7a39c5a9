import path from 'node:path';
import { packageFile } from './package-file.js';

/** The package's rules/ folder (or $TODEVAL_RULES_DIR), recognised by the MultiWOZ slot map inside it. */
export function rulesDir(): string {
  if (process.env.TODEVAL_RULES_DIR) return path.resolve(process.env.TODEVAL_RULES_DIR);
  return path.dirname(path.dirname(packageFile('rules', 'multiwoz', 'slot-map.json')));
}

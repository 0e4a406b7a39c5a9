import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The package's rules/ folder: src/rules (tsx) and dist/src/rules (built) sit at different depths,
 * so look upwards for the first rules/ that holds the SGD act files.
 */
export function rulesDir(): string {
  if (process.env.TODEVAL_RULES_DIR) return path.resolve(process.env.TODEVAL_RULES_DIR);
  for (const up of ['../..', '../../..']) {
    const dir = path.resolve(here, up, 'rules');
    if (existsSync(path.join(dir, 'multiwoz', 'slot-map.json'))) return dir;
  }
  throw new Error(`rules/ folder not found above ${here}`);
}

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The chart libraries the page inlines, in load order (vega-embed's UMD build reads the other two as globals). */
const VENDOR_FILES = [
  ['vega', 'build/vega.min.js'],
  ['vega-lite', 'build/vega-lite.min.js'],
  ['vega-embed', 'build/vega-embed.min.js'],
] as const;

/**
 * A dependency's file, found the way Node finds packages (node_modules of this module's directory and
 * every ancestor), since the packages' export maps do not expose their browser builds to require.resolve.
 */
function findInNodeModules(pkg: string, file: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'node_modules', pkg, file);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`${pkg}/${file} is missing: reinstall todeval's dependencies (npm install)`);
    dir = parent;
  }
}

let cached: { name: string; version: string; code: string }[] | undefined;

/** The minified browser builds of vega, vega-lite and vega-embed, with their versions. */
export function vendorScripts(): { name: string; version: string; code: string }[] {
  cached ??= VENDOR_FILES.map(([pkg, file]) => {
    const code = readFileSync(findInNodeModules(pkg, file), 'utf8');
    const version = (JSON.parse(readFileSync(findInNodeModules(pkg, 'package.json'), 'utf8')) as { version: string }).version;
    return { name: pkg, version, code };
  });
  return cached;
}

import { readFileSync } from 'node:fs';

// Read from package.json at run time so the signature always names the installed version.
const pkgUrl = new URL('../../package.json', import.meta.url);
const fallbackUrl = new URL('../package.json', import.meta.url);

function readVersion(): string {
  for (const url of [pkgUrl, fallbackUrl]) {
    try {
      const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'todeval' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate: src/ (tsx) and dist/src/ (built) sit at different depths
    }
  }
  return '0.0.0-unknown';
}

export const TODEVAL_VERSION = readVersion();

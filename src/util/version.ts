import { readPackageJson } from './package-file.js';

// Read from package.json at run time so the signature always names the installed version.
function readVersion(): string {
  try {
    const pkg = readPackageJson<{ name?: string; version?: string }>('package.json');
    if (pkg.name === 'todeval' && pkg.version) return pkg.version;
  } catch {
    // an installation without its package.json: say so in every signature rather than guess
  }
  return '0.0.0-unknown';
}

export const TODEVAL_VERSION = readVersion();

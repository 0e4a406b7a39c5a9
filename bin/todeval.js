#!/usr/bin/env node
// Thin launcher: the CLI compiled to dist/ by `npm run build` (`npm test` builds it too). `npm
// install` does not build (.npmrc turns install scripts off), so in a clone that has not built yet
// the TypeScript sources run through tsx, one of the dev dependencies.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(fileURLToPath(entry))) {
  await import(entry.href);
} else {
  const tsx = existsSync(fileURLToPath(source)) ? await import('tsx/esm/api').catch(() => undefined) : undefined;
  if (!tsx) {
    process.stderr.write('todeval: not built yet; run `npm run build` in the package folder\n');
    process.exit(2);
  }
  tsx.register();
  await import(source.href);
}

import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/shared.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-npm-setup-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('install without warnings or downloads', () => {
  it('npm reads the project .npmrc without an unknown-key warning, with install scripts off', async () => {
    // `npm config get` reads the project .npmrc as npm install does, and warns about the same keys.
    // Under `npm test` npm exports its settings to us: the child must read the file, not those.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_config_')));
    const r = await runProcess('npm', ['config', 'get', 'ignore-scripts'], { cwd: REPO_ROOT, env });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('true');
    expect(r.stderr).not.toMatch(/project config/i);
  });

  it('bin/todeval.js runs the sources through tsx where dist/ is not built (npm install no longer builds)', async () => {
    // A checkout with no dist/: the launcher, the sources and the installed packages.
    const repo = path.join(tmp, 'clone');
    mkdirSync(path.join(repo, 'bin'), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'bin', 'todeval.js'), path.join(repo, 'bin', 'todeval.js'));
    cpSync(path.join(REPO_ROOT, 'package.json'), path.join(repo, 'package.json'));
    for (const d of ['src', 'node_modules', 'rules', 'schemas', 'models', 'data']) symlinkSync(path.join(REPO_ROOT, d), path.join(repo, d));
    const r = await runProcess(process.execPath, [path.join(repo, 'bin', 'todeval.js'), '--version'], { cwd: tmp });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

// What a dependent does, end to end, with nothing beside it: `npm pack`'s tarball installed into an
// empty project with the README's one command: no npm warning, `npx todeval --help`, a score of the example through the installed CLI (its model built
// by the installed package from the tokenizer it ships), and `import { corpusBleu } from 'todeval'`.
// (What a newcomer does, the checkout copied into an empty folder and `npm install && npm run
// example` there, is .ci/run's first step; it is not repeated here.)
// Installs come from npm's cache (the repository's own install filled it), falling back to the registry.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_BUILT_CLI, runProcess } from './helpers/cli.js';
import { runInGroup } from './helpers/process-group.js';
import { REPO_ROOT } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

const EXAMPLE = path.join(REPO_ROOT, 'examples', 'sgd-mini');

/** The environment of someone who has set nothing: no data, no model, an empty hub cache. */
function newcomerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HF_HUB_CACHE: tempDir('fresh-hub'), npm_config_update_notifier: 'false', ...extra };
  for (const k of ['TODEVAL_DATA', 'TODEVAL_SHARED', 'TODEVAL_MODEL', 'TODEVAL_TOKENIZER_DIR']) delete env[k];
  // npm passes its own settings to scripts as npm_config_*; those of the npm running this suite are not the newcomer's.
  for (const k of Object.keys(env)) if (/^npm_(config|package|lifecycle)_/i.test(k) && k !== 'npm_config_update_notifier' && k !== 'npm_config_userconfig') delete env[k];
  return env;
}

describe('the packed tarball as a dependency', () => {
  // `npm pack` takes dist/ as built (`npm test` builds it first; .npmrc keeps `prepare` from running).
  it.skipIf(!HAS_BUILT_CLI)("installs into an empty project with the README's command and no warning; CLI and library work", async () => {
    const packDir = tempDir('pack');
    const npmrc = path.join(packDir, 'npmrc');
    // An empty user config: this machine's ~/.npmrc (and its warnings) is not the dependent's.
    writeFileSync(npmrc, '');
    const env = newcomerEnv({ npm_config_userconfig: npmrc });
    const pack = await runInGroup('npm', ['pack', '--pack-destination', packDir, '--silent'], { cwd: REPO_ROOT, env, timeoutMs: 120_000 });
    const tgz = path.join(packDir, pack.stdout.trim().split('\n').at(-1)!);
    expect(existsSync(tgz)).toBe(true);

    const proj = tempDir('dependent');
    writeFileSync(path.join(proj, 'package.json'), JSON.stringify({ name: 'dependent', private: true, type: 'module' }));
    // The README's command (with the cache preferred): --ignore-scripts keeps onnxruntime-node's
    // postinstall from downloading CUDA binaries from NuGet; the CPU provider ships in the package.
    const install = await runInGroup('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', tgz], { cwd: proj, env, timeoutMs: 300_000 });
    expect(install.stderr.split('\n').filter((l) => /\bwarn/i.test(l))).toEqual([]);
    // light-my-request is pinned as a dependency so that cookie@2 (Node >= 22) stays out for dependents too.
    const cookie = JSON.parse(readFileSync(path.join(proj, 'node_modules', 'cookie', 'package.json'), 'utf8')) as { version: string };
    expect(cookie.version).toMatch(/^1\./);

    const help = await runInGroup('npx', ['todeval', '--help'], { cwd: proj, env, timeoutMs: 120_000 });
    expect(help.stdout).toContain('Usage: todeval');

    // The lexical stand-in, built by the installed CLI from the tokenizer the package ships (README).
    // Through the link npm made (what `npx todeval` above resolved to), without npx's own start-up
    // each time: npx is checked once, by --help.
    const installed = path.join(proj, 'node_modules', '.bin', 'todeval');
    await runInGroup(installed, ['models', 'build-standin', 'lexical', '--out', 'standin'], { cwd: proj, env, timeoutMs: 120_000 });
    const own = ['--dataset', 'sgd', '--dialogues', path.join(EXAMPLE, 'dialogues.json'), '--schema', path.join(EXAMPLE, 'schema.json')];
    await runInGroup(installed, ['score', ...own, '-i', path.join(EXAMPLE, 'predictions.jsonl'), '--model', 'standin', '--device', 'cpu', '-o', 'score.json'], {
      cwd: proj,
      env,
      timeoutMs: 180_000,
    });
    const score = JSON.parse(readFileSync(path.join(proj, 'score.json'), 'utf8')) as { signature: { tool: string; model: string }; counts: { turns: number } };
    expect(score.signature.tool).toBe('todeval');
    expect(score.signature.model).toContain('lexical-standin');
    expect(score.counts.turns).toBe(9); // the example's system turns

    const lib = `import { corpusBleu } from 'todeval'; console.log(corpusBleu(['the cat sat on the mat'], [['the cat sat on the mat']]).score);`;
    const bleu = await runInGroup(process.execPath, ['--input-type=module', '-e', lib], { cwd: proj, env, timeoutMs: 60_000 });
    expect(Number(bleu.stdout.trim())).toBeCloseTo(100, 9);

    // CommonJS: the README's import() line, and require() where Node can require ES modules...
    const cjs = `(async () => { const t = await import('todeval'); const r = require('todeval'); console.log(t.corpusBleu === r.corpusBleu); })();`;
    const fromCjs = await runInGroup(process.execPath, ['--input-type=commonjs', '-e', cjs], { cwd: proj, env, timeoutMs: 60_000 });
    expect(fromCjs.stdout.trim()).toBe('true');
    // ...and where it cannot, an error that names import() (not ERR_PACKAGE_PATH_NOT_EXPORTED).
    const refused = await runProcess(process.execPath, ['--no-experimental-require-module', '--input-type=commonjs', '-e', "require('todeval')"], { cwd: proj, env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("todeval is an ES module package (ESM only)");
    expect(refused.stderr).toContain("await import('todeval')");
    expect(refused.stderr).not.toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  }, 600_000);
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cudaProviderInstalled } from '../src/nli/session.js';
import { runCli as run } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/shared.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';

describe('todeval nli', () => {
  it('prints the three probabilities and the argmax label as JSON', async () => {
    const dir = getSensitiveTinyModelDir();
    const res = await run(['nli', 'I want to book a hair cut. What about Queens?', 'The name of the hair stylist is Queens.', '--model', dir, '--json', '--device', 'cpu']);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as Record<string, unknown> & { signature: Record<string, unknown> };
    const p = [out.entailment, out.neutral, out.contradiction] as number[];
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    const labels = ['entailment', 'neutral', 'contradiction'];
    expect(out.label).toBe(labels[p.indexOf(Math.max(...p))]);
    expect(out.signature).toMatchObject({ tool: 'todeval', dtype: 'fp32', device: 'cpu', maxLength: 512 });
    expect(String(out.signature.revision)).toMatch(/^sha256:/);
  });

  it('exits 2 with one line naming the pull command when no model is present', async () => {
    const res = await run(['nli', 'a', 'b'], { HF_HOME: '/nonexistent-hf-home', TODEVAL_MODEL: '' });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/not downloaded.*todeval models pull --dtype fp32/);
  });

  it.skipIf(cudaProviderInstalled() !== false)('exits 2 with one line for --device cuda when the CUDA provider is not installed', async () => {
    const res = await run(['nli', 'a', 'b', '--model', getSensitiveTinyModelDir(), '--device', 'cuda']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/CUDA/);
    // The fix it names is, word for word, what the README's CUDA flow documents.
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('npm run cuda:setup') && l.includes('# or: '));
    expect(line).toBeDefined();
    expect(res.stderr).toContain('`npm run cuda:setup`');
    expect(res.stderr).toContain(`\`${line!.split('# or: ')[1].trim()}\``);
  });
});

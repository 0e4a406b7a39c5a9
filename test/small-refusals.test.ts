import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPredictions } from '../src/metrics/predictions-file.js';
import { InputError } from '../src/util/errors.js';
import { runProcess } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

// Issue 42's smaller items (the output-path ones are in output-paths.test.ts).

describe('a prediction without an utterance', () => {
  it('is refused as such, naming the line (was: the one-line file read as a map, "1 prediction ids match no turn (first: id)")', () => {
    const file = path.join(tempDir('small'), 'p.jsonl');
    writeFileSync(file, '{"id": "mini_001/1"}\n');
    let error: unknown;
    try {
      loadPredictions(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).oneLine()).toBe(`${file}: line 1: must have required property 'utterance' (schemas/predictions.schema.json)`);
  });
});

describe('deploy/slurm/shard.sbatch', () => {
  it('SLURM_ARRAY_TASK_ID=abc: one clear line, exit 2 (was: "abc: unbound variable", exit 1)', async () => {
    const r = await runProcess('bash', [path.join(REPO_ROOT, 'deploy', 'slurm', 'shard.sbatch'), 'score'], {
      env: { PATH: process.env.PATH, TODEVAL_RUN_DIR: tempDir('small'), SLURM_ARRAY_TASK_ID: 'abc', SLURM_ARRAY_TASK_COUNT: '4', TODEVAL_BIN: 'false' },
    });
    expect(r.stderr).toBe("shard.sbatch: SLURM_ARRAY_TASK_ID must be a whole number (Slurm sets it for sbatch --array=0-(N-1)), not 'abc'\n");
    expect(r.code).toBe(2);
  });
});

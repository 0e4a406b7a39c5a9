/**
 * vitest's sequence.sequencer: the longest test files start first, so that the last file to finish is
 * not a long one started late (the run's wall time is at least the latest start plus its length).
 * vitest's own order takes durations from its cache of the last run (node_modules/.vite/vitest), and
 * on a clean clone, as in CI, which has no cache, falls back to file size, which put files of three
 * minutes behind dozens of short ones. A file's expected length is the cached duration when there is
 * one, else CI_SECONDS below, else 0 (short files keep vitest's order among themselves).
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds each long file took in one CI run of `npm test` with the data (2 cores, the files that took
 * over 8 s). Only the order matters: update it when a file's length changes by much.
 */
export const CI_SECONDS: Record<string, number> = {
  'test/sacrebleu-dropin.test.ts': 178,
  'test/python-package.test.ts': 149,
  'test/report-browser.test.ts': 130,
  'test/slurm.test.ts': 118,
  'test/chrf-ter.test.ts': 116,
  'test/config-edges.test.ts': 82,
  'test/nli-faults.test.ts': 72,
  'test/q8-cross-cpu.test.ts': 70,
  'test/onnx-builder-q8.test.ts': 69,
  'test/serve.test.ts': 58,
  'test/doc-figures.test.ts': 57,
  'test/cli-qa.test.ts': 50,
  'test/report-significance.test.ts': 49,
  'test/gpu-bundle.test.ts': 48,
  'test/tokenizer-segments.test.ts': 46,
  'test/significance-bleu.test.ts': 46,
  'test/mwz-text-metrics.test.ts': 45,
  'test/nli-families-deberta-bart.test.ts': 35,
  'test/shard-merge.test.ts': 34,
  'test/significance-compare.test.ts': 33,
  'test/workers.test.ts': 28,
  'test/library-docs.test.ts': 26,
  'test/models-pull.test.ts': 23,
  'test/fresh-install.test.ts': 19,
  'test/signature-travel.test.ts': 19,
  'test/torch-parity-q8.test.ts': 18,
  'test/score-resume.test.ts': 15,
  'test/score-host-threads.test.ts': 14,
  'test/example.test.ts': 13,
  'test/signals.test.ts': 13,
  'test/newcomer.test.ts': 12,
  'test/score-e2e.test.ts': 11,
  'test/significance-limits.test.ts': 11,
  'test/onnx-builder-cli.test.ts': 11,
  'test/onnx-builder.test.ts': 10,
  'test/evaluate-shard.test.ts': 10,
  'test/bad-input-probe.test.ts': 9,
  'test/sacrebleu-cli.test.ts': 9,
  'test/session-thread-exit.test.ts': 9,
  'test/one-writer.test.ts': 8,
};

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files); // failed first, then by cached duration or by size
    const cache = this.ctx.cache;
    const expected = (spec: TestSpecification): number => {
      const rel = path.relative(this.ctx.config.root, spec.moduleId).split(path.sep).join('/');
      const cached = cache.getFileTestResults(`${spec.project.name}:${rel}`);
      if (cached?.failed) return Number.POSITIVE_INFINITY; // as vitest does: a failed file reruns first
      return cached ? cached.duration / 1000 : (CI_SECONDS[rel] ?? 0);
    };
    const rank = new Map(base.map((spec, i) => [spec, i]));
    // A stable sort on the expected length: among equals (the short files), vitest's order stays.
    return base.slice().sort((a, b) => expected(b) - expected(a) || rank.get(a)! - rank.get(b)!);
  }
}

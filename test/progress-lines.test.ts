import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProgressLines, progressBar } from '../src/util/progress/bar.js';
import { runCli } from './helpers/cli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

describe('progress lines for runs nobody watches', () => {
  it('the bar format as a plain line: done/total with percent, pairs/s from the payload, ETA from the rate since start', () => {
    let t = 1_000_000;
    const lines: string[] = [];
    // FAKE clock and writer, so the line's numbers are exact.
    const p = new ProgressLines('score |{bar}| {value}/{total} turns | {pairs} pairs | {rate} pairs/s | ETA {eta_formatted}', 30, (l) => lines.push(l), () => t);
    p.start(400, 100, { pairs: 0, rate: '0.0' }); // 100 resumed: not counted in the rate
    t += 60_000;
    p.update(160, { pairs: 900, rate: '15.0' });
    expect(p.line()).toBe('todeval: score 160/400 turns (40%) | 900 pairs | 15.0 pairs/s | ETA 4m 0s');
    p.stop();
    expect(p.isActive).toBe(false);
    expect(lines).toEqual([]); // nothing printed before the first interval
  });

  it('auto without a terminal prints lines; none prints nothing; bar is forced', () => {
    expect(progressBar('x {bar} {value}/{total} items', {}, 'none')).toBeUndefined();
    const auto = progressBar('x {bar} {value}/{total} items', {}, 'auto');
    expect(process.stderr.isTTY ? auto : auto instanceof ProgressLines).toBe(process.stderr.isTTY ? auto : true);
    expect(progressBar('x', {}, 'lines')).toBeInstanceOf(ProgressLines);
    expect(progressBar('x', {}, 'bar')).not.toBeInstanceOf(ProgressLines);
    // Commands without --progress keep the old rule: nothing without a terminal.
    if (!process.stderr.isTTY) expect(progressBar('x')).toBeUndefined();
  });

  it.skipIf(!hasData('sgd', 'test', 'dialogues_001.json'))(
    'score without a terminal prints a progress line every interval (default auto), and none with --progress none',
    async () => {
      const model = await getTinyModelDir();
      // The first file holds the set's first 60 turns (768 system turns): without --dialogues each run read
      // the whole SGD test set (~1 CPU-s) for them.
      const args = ['score', '--data-dir', DATA_DIR, '--dialogues', path.join(DATA_DIR, 'sgd', 'test', 'dialogues_001.json'), '--limit', '60', '--chunk', '2', '--model', model, '--device', 'cpu'];
      const r = await runCli(args, { TODEVAL_PROGRESS_SECONDS: '0.2' });
      expect(r.code).toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(l).toMatch(/^todeval: score \d+\/60 turns \(\d+%\) \| \d+ pairs \| \d+\.\d pairs\/s \| ETA (\d+[smh]|unknown)/);
      const quiet = await runCli([...args, '--progress', 'none'], { TODEVAL_PROGRESS_SECONDS: '0.2' });
      expect(quiet.code).toBe(0);
      expect(quiet.stderr).toBe('');
    },
    120_000,
  );
});

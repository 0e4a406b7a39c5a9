import { progressBar, type ProgressMode } from '../util/progress/bar.js';
import type { WorkersHooks } from '../shard/workers.js';

/**
 * What `score|rerank --workers N` shows while the shard processes run: one progress bar for all of
 * them (the shards draw none), each shard's stderr lines as `[shard K/N] line`, the parent's notices as `todeval: line`. `stop` ends the
 * bar (call it whatever happens).
 */
export function workersDisplay(progress: ProgressMode | undefined): { hooks: WorkersHooks; stop(): void } {
  let bar: ReturnType<typeof progressBar>;
  return {
    hooks: {
      started: (count) => {
        bar = progressBar(`workers ${count} |{bar}| {value}/{total} | ETA {eta_formatted}`, { etaBuffer: 50 }, progress);
      },
      progress: (done, total) => {
        if (!bar) return;
        if (bar.isActive) bar.setTotal(total);
        else bar.start(total, 0);
        bar.update(done);
      },
      shardLine: (shard, count, line) => process.stderr.write(`[shard ${shard}/${count}] ${line}\n`),
      notice: (message) => process.stderr.write(`todeval: ${message}\n`),
    },
    stop: () => bar?.stop(),
  };
}

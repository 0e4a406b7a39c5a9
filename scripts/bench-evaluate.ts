/**
 * bench:evaluate — BLEU, Inform & Success (both variants), richness and DST on one full predictions
 * file, as `todeval evaluate` runs them: reading the file, the cached ground truth, the database.
 * Prints wall time per phase and peak resident memory. Usage:
 *   npm run bench:evaluate [-- predictions.json] [--cold]
 * --cold rebuilds the ground truth instead of reading its cache.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveDataDir } from '../src/data/data-dir.js';
import { Evaluator } from '../src/metrics/mwz/evaluator.js';

const args = process.argv.slice(2);
const cold = args.includes('--cold');
const data = resolveDataDir(process.env.TODEVAL_DATA);
const file = args.find((a) => !a.startsWith('--')) ?? path.join(data.dir, 'multiwoz', 'predictions', 'augpt.json');

let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 5);

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const input = JSON.parse(readFileSync(file, 'utf8')) as unknown;
const t1 = performance.now();
const evaluator = new Evaluator({ bleu: true, success: true, richness: true, dst: true, dataDir: data.dir, noCache: cold });
const gt = evaluator.groundTruth();
const t2 = performance.now();
const result = evaluator.evaluate(input, file);
const t3 = performance.now();
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);

const ms = (a: number, b: number) => `${(b - a).toFixed(0)} ms`;
console.log(`file            ${file}`);
console.log(`turns           ${result.details.turns} in ${result.details.dialogues} dialogues`);
console.log(`read input      ${ms(t0, t1)}`);
console.log(`ground truth    ${ms(t1, t2)} (${cold ? 'rebuilt' : 'cache'}: ${gt.source})`);
console.log(`evaluate        ${ms(t2, t3)} (normalization, BLEU, Inform/Success x2, richness, DST)`);
console.log(`total           ${ms(t0, t3)} (target < 5000 ms)`);
console.log(`CPU time        ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (user+sys; less sensitive to a loaded machine than wall time)`);
console.log(`peak RSS        ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
console.log(
  `scores          BLEU ${Object.values(result.bleu ?? {})[0]?.toFixed(2)}, Inform ${result.success?.inform.total}, ` +
    `Success ${result.success?.success.total}, opt. ${result.success?.optimistic.inform.total}/${result.success?.optimistic.success.total}, ` +
    `DST JGA ${result.dst ? result.dst.joint_accuracy.toFixed(1) : 'n/a'}`,
);

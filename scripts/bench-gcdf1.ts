/**
 * Time and peak memory of GCDF1 on the whole convlab baseline set (1,000 conversations).
 *   npm run bench:gcdf1 [-- --dialogues DIR --reference baseline.json]
 * With --reference (the reference release's output JSON), prints the largest difference per score.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveDataDir } from '../src/data/data-dir.js';
import { loadCanonicalValues } from '../src/metrics/gcdf1/canonical-values.js';
import { loadConfig } from '../src/metrics/gcdf1/config.js';
import { aggregate, evaluateDialogue, loadDialogues, makeEvaluator } from '../src/metrics/gcdf1/evaluate.js';
import { formatSummary } from '../src/metrics/gcdf1/summary.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const data = resolveDataDir(arg('--data-dir')).dir;
const dir = arg('--dialogues') ?? path.join(data, 'gcdf1', 'convlab_baselines', 'test');
const mb = (kb: number) => (kb / 1024).toFixed(0);

const t0 = performance.now();
const cpu0 = process.cpuUsage();
const config = loadConfig(path.join(data, 'gcdf1', 'multiwoz_user_evaluator.yaml'));
const cmap = loadCanonicalValues(path.join(data, 'gcdf1', 'resources', 'multiwoz21_canonical_map.json'));
const { dialogues } = loadDialogues(dir);
const t1 = performance.now();
const ev = makeEvaluator(config, cmap);
const records = dialogues.map((d) => evaluateDialogue(d, ev));
const scores = aggregate(records);
const t2 = performance.now();
const cpu = process.cpuUsage(cpu0);

console.log(formatSummary(scores));
console.log(`\ndialogues: ${dialogues.length} (${dir})`);
console.log(`load (config, canonical map, dialogues): ${((t1 - t0) / 1000).toFixed(2)} s`);
console.log(`score: ${((t2 - t1) / 1000).toFixed(2)} s (${((t2 - t1) / dialogues.length).toFixed(1)} ms per dialogue)`);
console.log(`total: ${((t2 - t0) / 1000).toFixed(2)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s CPU (wall grows when other jobs share the cores), peak RSS ${mb(process.resourceUsage().maxRSS)} MiB`);

const reference = arg('--reference');
if (reference) {
  const ref = JSON.parse(readFileSync(reference, 'utf8')) as Record<string, Record<string, number>>;
  for (const key of ['igcd_f1', 'igcd_precision', 'igcd_recall', 'rgcd_f1', 'rgcd_precision', 'rgcd_recall'] as const) {
    const theirs = ref[key] ?? (key === 'rgcd_recall' ? ref.rcgd_recall : undefined);
    if (!theirs) continue;
    const worst = Math.max(...Object.entries(theirs).map(([k, v]) => Math.abs((scores[key][k] ?? NaN) - v)));
    console.log(`max |ours - reference| ${key}: ${worst.toExponential(2)}`);
  }
}

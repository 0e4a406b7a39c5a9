/**
 * BLEU, chrF, chrF++ and TER, ours and sacreBLEU's side by side in one run:
 *   npm run bench:text-metrics -- --sacrebleu CHECKOUT [--python /usr/bin/python3] [--metrics bleu,chrf,chrf++,ter]
 * The work per metric: the references prepared once, then the corpus score of each of the 16 WMT17
 * systems sacreBLEU's test suite ships (3,004 segments each), as `todeval bleu -m ...` and
 * `sacrebleu -m ...` do with 16 system files. sacreBLEU runs from its source checkout (its python
 * needs sacreBLEU's dependencies: Debian's python3-numpy, -regex, -tabulate, -portalocker,
 * -colorama, -lxml), one process per metric, timed inside the process (import and pickle reading
 * excluded on both sides). Prints CPU and wall seconds, the ratios, the largest score difference
 * and the load average before and after: the machine is shared, so compare CPU seconds.
 * Without --sacrebleu (or SACREBLEU_DIR) ours runs on a synthetic corpus of the same shape and
 * sacreBLEU is skipped with a message.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { BleuReferences } from '../src/metrics/text/bleu.js';
import { ChrfReferences } from '../src/metrics/text/chrf.js';
import { TerReferences } from '../src/metrics/text/ter.js';
import { benchCorpus, timed } from './lib/text-bench-corpus.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const checkout = arg('--sacrebleu') ?? process.env.SACREBLEU_DIR;
const python = arg('--python') ?? '/usr/bin/python3';
const wanted = (arg('--metrics') ?? 'bleu,chrf,chrf++,ter').split(',');

interface Metric {
  key: string;
  label: string;
  /** Ours: references prepared once, then one score per system. */
  ours(refs: string[][]): (hyps: string[]) => number;
  /** sacreBLEU's constructor call, given `refs`. */
  python: string;
}

const METRICS: Metric[] = [
  { key: 'bleu', label: 'BLEU', ours: (refs) => { const r = new BleuReferences(refs); return (h) => r.score(h).score; }, python: 'BLEU(references=refs)' },
  { key: 'chrf', label: 'chrF', ours: (refs) => { const r = new ChrfReferences(refs); return (h) => r.score(h).score; }, python: 'CHRF(references=refs)' },
  { key: 'chrf++', label: 'chrF++', ours: (refs) => { const r = new ChrfReferences(refs, { wordOrder: 2 }); return (h) => r.score(h).score; }, python: 'CHRF(word_order=2, references=refs)' },
  { key: 'ter', label: 'TER', ours: (refs) => { const r = new TerReferences(refs); return (h) => r.score(h).score; }, python: 'TER(references=refs)' },
];
for (const w of wanted) {
  if (!METRICS.some((m) => m.key === w)) {
    console.error(`--metrics: unknown metric ${w} (bleu, chrf, chrf++, ter)`);
    process.exit(2);
  }
}

const load = () => `load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
const corpus = await benchCorpus(checkout, python, { moveBlocks: true });
console.log(`data: ${corpus.source}; ${load()} (2-core machine: compare CPU seconds)`);

const metrics = METRICS.filter((m) => wanted.includes(m.key));
const ours = new Map(
  metrics.map((m) => [
    m.key,
    timed(() => {
      const score = m.ours(corpus.refs);
      return corpus.systems.map(([, lines]) => score(lines));
    }),
  ]),
);

const s = (x: number) => `${x.toFixed(2)} s`;
if (!checkout) {
  console.log('\nours (references once + 16 corpus scores; CPU seconds, wall in brackets):');
  for (const m of metrics) console.log(`  ${m.label.padEnd(7)} ${s(ours.get(m.key)!.cpu)} (${s(ours.get(m.key)!.wall)})`);
  console.log('\nsacreBLEU: skipped (pass --sacrebleu CHECKOUT, a sacreBLEU source checkout, or set SACREBLEU_DIR, to time it on its WMT17 systems beside ours)');
  process.exit(0);
}

const version = path.join(checkout, 'sacrebleu', 'version.py');
if (!existsSync(version)) throw new Error(`${version} is absent: a git checkout needs one (scripts/significance-fixtures.py writes it)`);
const script = `
import json, sys, time
sys.path.insert(0, sys.argv[1])
from sacrebleu.metrics import BLEU, CHRF, TER
d = json.load(open(sys.argv[2]))
refs = d['refs']
w0, c0 = time.perf_counter(), time.process_time()
metric = ${'{METRIC}'}
scores = [metric.corpus_score(lines, None).score for _, lines in d['systems']]
print(json.dumps({'wall': time.perf_counter() - w0, 'cpu': time.process_time() - c0, 'scores': scores}))
`;
const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-bench-sacrebleu-'));
try {
  const dataFile = path.join(tmp, 'systems.json');
  writeFileSync(dataFile, JSON.stringify({ refs: corpus.refs, systems: corpus.systems }));
  console.log(`\n${'metric'.padEnd(7)}  ${'ours CPU (wall)'.padEnd(18)}  ${'sacreBLEU CPU (wall)'.padEnd(22)}  CPU ratio  wall ratio  max |score diff|`);
  for (const m of metrics) {
    const r = spawnSync(python, ['-c', script.replace('{METRIC}', m.python), checkout, dataFile], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`sacreBLEU ${m.label} failed: ${r.stderr}`);
    const theirs = JSON.parse(r.stdout.trim().split('\n').pop()!) as { wall: number; cpu: number; scores: number[] };
    const o = ours.get(m.key)!;
    const diff = Math.max(...o.value.map((x, i) => Math.abs(x - theirs.scores[i])));
    console.log(
      `${m.label.padEnd(7)}  ${`${s(o.cpu)} (${s(o.wall)})`.padEnd(18)}  ${`${s(theirs.cpu)} (${s(theirs.wall)})`.padEnd(22)}  ${`${(theirs.cpu / o.cpu).toFixed(1)}x`.padStart(9)}  ${`${(theirs.wall / o.wall).toFixed(1)}x`.padStart(10)}  ${diff.toExponential(1)}`,
    );
  }
  console.log(`${load()} after`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// Expansion speed of the rule engine on the whole SGD test set (and the MultiWOZ test file).
// Usage: npm run bench:rules [-- --data-dir DIR] [-- --repeat N]
import { loadDataset, type DatasetName } from '../src/adapters/load.js';
import { resolveDataDir } from '../src/data/data-dir.js';
import { Expander } from '../src/rules/expand.js';
import { loadRules } from '../src/rules/load.js';
import { buildValueIndex } from '../src/rules/value-index.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dataDir = resolveDataDir(arg('--data-dir')).dir;
const repeat = Number(arg('--repeat') ?? 5);

function bench(dataset: DatasetName): void {
  let t = performance.now();
  const ds = loadDataset({ dataset, dataDir });
  const loadMs = performance.now() - t;

  // What a fresh run pays: rules, value index and every template prepared from cold.
  t = performance.now();
  const rules = loadRules(dataset);
  const ex = new Expander(ds.schema, rules, buildValueIndex(ds.turns));
  let actions = 0;
  let candidates = 0;
  let negatives = 0;
  for (const turn of ds.turns) {
    for (const r of ex.expandTurn(turn)) {
      actions++;
      candidates += r.candidates.length;
      negatives += r.negatives.length;
    }
  }
  const coldMs = performance.now() - t;

  // Steady state: the same expander again (phrases cached), best of N.
  let warmMs = Infinity;
  for (let i = 0; i < repeat; i++) {
    t = performance.now();
    for (const turn of ds.turns) ex.expandTurn(turn);
    warmMs = Math.min(warmMs, performance.now() - t);
  }
  console.log(
    `${dataset}: ${ds.turns.length} system turns, ${actions} actions -> ${candidates} candidates, ${negatives} negatives`,
  );
  console.log(`  load dialogues+schema: ${loadMs.toFixed(0)} ms`);
  console.log(
    `  expand (cold: rules + value index + expansion): ${coldMs.toFixed(0)} ms = ${Math.round(actions / (coldMs / 1000))} actions/s`,
  );
  console.log(`  expand (warm, best of ${repeat}): ${warmMs.toFixed(0)} ms = ${Math.round(actions / (warmMs / 1000))} actions/s`);
}

bench('sgd');
if (!process.argv.includes('--sgd-only')) bench('multiwoz');

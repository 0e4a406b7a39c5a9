/**
 * Writes a value-swapped "second system" for a whole dataset split as predictions JSONL
 * ({"id","utterance"} per system turn), for timing `todeval score` on a system that reuses stored
 * references (gpu/run.sh). The swap is scripts/lib/value-swap.ts: deterministic, one per turn.
 *
 *   node dist/scripts/second-system.js --out FILE [--dataset sgd] [--data-dir DIR]
 */
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { loadSgsaccData } from '../src/metrics/sgsacc/index.js';
import { buildValueIndex } from '../src/rules/value-index.js';
import { swapOneValuePerTurn } from './lib/value-swap.js';

const program = new Command('second-system')
  .requiredOption('--out <file>', 'predictions JSONL to write')
  .option('--dataset <name>', 'sgd or multiwoz', 'sgd')
  .option('--data-dir <dir>', 'data directory')
  .option('--limit <n>', 'only the first N system turns (as score --limit)', (v) => Number(v));
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ out: string; dataset: 'sgd' | 'multiwoz'; dataDir?: string; limit?: number }>();

const data = loadSgsaccData({ dataset: o.dataset, dataDir: resolveDataDir(o.dataDir).dir });
const turns = data.expand(o.limit ? data.loaded.turns.slice(0, o.limit) : data.loaded.turns);
const { utterances, swaps } = swapOneValuePerTurn(turns, buildValueIndex(data.loaded.turns));
writeFileSync(o.out, [...utterances].map(([id, utterance]) => JSON.stringify({ id, utterance })).join('\n') + '\n');
console.log(`wrote ${utterances.size} predictions (${swaps} with one slot value swapped) to ${o.out}`);

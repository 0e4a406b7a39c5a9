import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { runBuiltCli, runBuiltCliAsync } from './cli.js';
import { getLexicalStandinDir } from './lexical-standin.js';
import { sharedRunFixture } from './run-fixture.js';
import { REPO_ROOT } from './shared.js';
import { tempDir } from './temp.js';

export interface ExampleRuns {
  dir: string;
  system: { report: string; turns: string };
  gold: { report: string; turns: string };
}

const EXAMPLE = path.join(REPO_ROOT, 'examples', 'sgd-mini');

/** The files of an example fixture, by name in its folder. */
const EXAMPLE_FILES = ['refs.jsonl', 'system.json', 'system.turns.jsonl', 'gold.json', 'gold.turns.jsonl'];

/** `score` of the bundled example into `dir`: the system (its predictions) and the ground truth. */
async function scoreExampleInto(dir: string): Promise<void> {
  const model = getLexicalStandinDir();
  const f = (n: string) => path.join(dir, n);
  const own = ['--dataset', 'sgd', '--dialogues', path.join(EXAMPLE, 'dialogues.json'), '--schema', path.join(EXAMPLE, 'schema.json'), '--model', model, '--device', 'cpu', '--references', f('refs.jsonl')];
  for (const [name, extra] of [['system', ['--predictions', path.join(EXAMPLE, 'predictions.jsonl')]], ['gold', []]] as const) {
    const r = await runBuiltCli(['score', ...own, ...extra, '--out', f(`${name}.turns.jsonl`), '-o', f(`${name}.json`)]);
    if (r.code !== 0) throw new Error(`score (${name}) failed: ${r.stderr}`);
  }
}

/**
 * The bundled example scored with the lexical stand-in, as `npm run example` does: a system (its
 * predictions) and the ground truth, each with its report and per-turn file, and the references
 * file they stored. Uses the built CLI. Scored once per test run (three files use it:
 * report, report-significance, report-browser; sharedRunFixture) and copied into a folder of the
 * caller's own, which the caller may write into and which goes with its test file, as before.
 */
export async function scoreExampleRuns(): Promise<ExampleRuns> {
  const dir = tempDir('report-runs');
  const shared = await sharedRunFixture('example-runs', scoreExampleInto);
  if (shared === undefined) await scoreExampleInto(dir);
  else for (const n of EXAMPLE_FILES) copyFileSync(path.join(shared, n), path.join(dir, n));
  const f = (n: string) => path.join(dir, n);
  return {
    dir,
    system: { report: f('system.json'), turns: f('system.turns.jsonl') },
    gold: { report: f('gold.json'), turns: f('gold.turns.jsonl') },
  };
}

export interface FullSgdRuns {
  dir: string;
  runs: string[];
  turns: string[];
}

/**
 * Two runs over the whole SGD test set (24,863 system turns) with the lexical stand-in, for the
 * browser tests of a report at full scale: the ground truth (which builds the references: the one
 * expensive step, ~40 s of CPU), and the ground truth again under --context-control, which reuses
 * the stored references and ground-truth scores and so costs no NLI pair. Uses the built CLI.
 */
export async function scoreFullSgdRuns(dataDir: string): Promise<FullSgdRuns> {
  const dir = tempDir('report-full');
  const model = getLexicalStandinDir();
  const f = (n: string) => path.join(dir, n);
  const own = ['--dataset', 'sgd', '--data-dir', dataDir, '--model', model, '--device', 'cpu', '--references', f('refs.jsonl'), '--progress', 'none'];
  // Asynchronously: a minute-long synchronous child would stall the test worker's messages to vitest.
  for (const [name, extra] of [['gold', []], ['controlled', ['--context-control', '--system', 'ground-truth, context control']]] as const) {
    const r = await runBuiltCliAsync(['score', ...own, ...extra, '--turns', f(`${name}.turns.jsonl`), '-o', f(`${name}.json`)]);
    if (r.code !== 0) throw new Error(`score (${name}) failed: ${r.stderr}`);
  }
  return { dir, runs: [f('gold.json'), f('controlled.json')], turns: [f('gold.turns.jsonl'), f('controlled.turns.jsonl')] };
}

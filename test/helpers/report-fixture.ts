import path from 'node:path';
import { runBuiltCli } from './cli.js';
import { getLexicalStandinDir } from './lexical-standin.js';
import { REPO_ROOT } from './shared.js';
import { tempDir } from './temp.js';

export interface ExampleRuns {
  dir: string;
  system: { report: string; turns: string };
  gold: { report: string; turns: string };
}

const EXAMPLE = path.join(REPO_ROOT, 'examples', 'sgd-mini');

/**
 * The bundled example scored with the lexical stand-in, as `npm run example` does: a system (its
 * predictions) and the ground truth, each with its report and per-turn file. Uses the built CLI.
 */
export function scoreExampleRuns(): ExampleRuns {
  const dir = tempDir('report-runs');
  const model = getLexicalStandinDir();
  const f = (n: string) => path.join(dir, n);
  const own = ['--dataset', 'sgd', '--dialogues', path.join(EXAMPLE, 'dialogues.json'), '--schema', path.join(EXAMPLE, 'schema.json'), '--model', model, '--device', 'cpu', '--references', f('refs.jsonl')];
  for (const [name, extra] of [['system', ['--predictions', path.join(EXAMPLE, 'predictions.jsonl')]], ['gold', []]] as const) {
    const r = runBuiltCli(['score', ...own, ...extra, '--out', f(`${name}.turns.jsonl`), '-o', f(`${name}.json`)]);
    if (r.code !== 0) throw new Error(`score (${name}) failed: ${r.stderr}`);
  }
  return {
    dir,
    system: { report: f('system.json'), turns: f('system.turns.jsonl') },
    gold: { report: f('gold.json'), turns: f('gold.turns.jsonl') },
  };
}

// The corpus the sacreBLEU corpus and sentence-level comparisons run on: sacreBLEU's WMT17 en-de
// systems where the sacreBLEU checkout in SACREBLEU_DIR has its test data (a git clone does;
// ../shared/tools/sacrebleu, the package source CI has, does not), else the responses of the five
// published MultiWOZ systems in the data dir against their delexicalized references (CI has those).
// The WMT17 comparisons read the numbers sacreBLEU wrote to test/fixtures/significance/wmt17*.json;
// the MultiWOZ ones ask the live sacreBLEU (test/helpers/sacrebleu-systems.py) for the same numbers.
// Neither present: the suites skip with one line, except under TODEVAL_REQUIRE_REFERENCES (.ci/run),
// where that is an error.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readWmt17 } from '../../scripts/lib/sacrebleu-wmt17.js';
import type { BleuTokenizerName } from '../../src/metrics/text/bleu-tokenizers.js';
import { sacrebleuAnswer } from './reference-memo.js';
import { sharedRunValue } from './run-fixture.js';
import type { BleuNumbers, SacrebleuBleuTest } from './sacrebleu-fixtures.js';
import { DATA_DIR, REPO_ROOT } from './shared.js';

export interface ReferenceCorpus {
  kind: 'wmt17' | 'multiwoz';
  /** What ran, for test names: "sacreBLEU's WMT17 test systems (16 systems x 3,004 segments)". */
  label: string;
  /** [name, one line per segment]. */
  systems: [string, string[]][];
  /** One reference stream. */
  refs: string[][];
}

export const SACREBLEU_DIR = process.env.SACREBLEU_DIR ? path.resolve(REPO_ROOT, process.env.SACREBLEU_DIR) : undefined;
export const SACREBLEU_PYTHON = process.env.SACREBLEU_PYTHON ?? '/usr/bin/python3';

/** Why sacreBLEU's source cannot be used, or undefined when it can. */
export function sacrebleuMissing(): string | undefined {
  if (!SACREBLEU_DIR) return 'SACREBLEU_DIR is not set (a sacreBLEU 2.6 source checkout, e.g. ../shared/tools/sacrebleu)';
  if (!existsSync(path.join(SACREBLEU_DIR, 'sacrebleu', 'sacrebleu.py'))) return `SACREBLEU_DIR=${SACREBLEU_DIR} holds no sacrebleu/sacrebleu.py`;
  return undefined;
}

/** The sacreBLEU version the source names (its version.py), for the log line saying what ran. */
export function sacrebleuVersion(): string {
  const file = path.join(SACREBLEU_DIR!, 'sacrebleu', 'version.py');
  return existsSync(file) ? (/__version__ = "([^"]+)"/.exec(readFileSync(file, 'utf8'))?.[1] ?? '?') : '?';
}

/**
 * A turn of the event loop (a macrotask, not a microtask): between long synchronous steps, so that
 * the test worker answers vitest's RPC meanwhile (a worker blocked for a minute on a loaded machine
 * fails the run with "Timeout calling onTaskUpdate").
 */
export const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * `work`, already started, as a function that returns its result or throws its error when called:
 * for a child process a suite starts early and awaits in a later hook. The rejection is handled at
 * once, so Node never reports it as unhandled while nothing awaits it yet.
 */
export function settled<T>(work: Promise<T>): () => Promise<T> {
  const outcome = work.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  return async () => {
    const o = await outcome;
    if (!o.ok) throw o.error;
    return o.value;
  };
}

export const MWZ_SYSTEMS = ['damd', 'hdsa', 'augpt', 'uniconv', 'lava'] as const;

/**
 * The five systems' responses, normalized as mwzeval's BLEU reads them, against the references it
 * scores them with, on the turns every system answers (damd leaves out one dialogue), dialogues in
 * id order. Each turn's reference is the same for every system (checked).
 */
export async function mwzResponseCorpus(dataDir = DATA_DIR): Promise<ReferenceCorpus> {
  // Imported here, not above: a suite that reads the run's shared copy (below) never loads mwzeval's code.
  const { Evaluator } = await import('../../src/metrics/mwz/evaluator.js');
  const ev = new Evaluator({ dataDir, bleu: true });
  const predictions: { name: string; p: ReturnType<InstanceType<typeof Evaluator>['validate']> }[] = [];
  for (const name of MWZ_SYSTEMS) {
    predictions.push({ name, p: ev.validate(JSON.parse(readFileSync(path.join(dataDir, 'multiwoz', 'predictions', `${name}.json`), 'utf8'))) });
    await yieldTurn();
  }
  const common = Object.keys(predictions[0].p.dialogues)
    .filter((id) => predictions.every(({ p }) => p.dialogues[id]?.length === predictions[0].p.dialogues[id].length))
    .sort();
  let refs: string[] | undefined;
  const systems = predictions.map(({ name, p }): [string, string[]] => {
    const strings = ev.bleuStrings({ ...p, dialogues: Object.fromEntries(common.map((id) => [id, p.dialogues[id]])) });
    if (refs && strings.refs.some((r, i) => r !== refs![i])) throw new Error(`${name}: references differ from ${MWZ_SYSTEMS[0]}'s on the same turns`);
    refs ??= strings.refs;
    return [name, strings.hyps];
  });
  return {
    kind: 'multiwoz',
    label: `the MultiWOZ 2.1 test responses of ${MWZ_SYSTEMS.length} published systems (${common.length} dialogues, ${refs!.length.toLocaleString('en-US')} turns each)`,
    systems,
    refs: [refs!],
  };
}

/**
 * mwzResponseCorpus() of DATA_DIR, built once per test run (sharedRunValue): three suites compare on
 * it (sacrebleu-dropin, chrf-ter, significance-bleu), and each built it from the five predictions
 * files (validation and normalization, 1.2-1.5 CPU seconds).
 */
function sharedMwzResponseCorpus(): Promise<ReferenceCorpus> {
  // Named by the data dir, so a run that used two data dirs never mixes them up.
  return sharedRunValue(`mwz-response-corpus-${createHash('sha256').update(DATA_DIR).digest('hex').slice(0, 16)}`, () => mwzResponseCorpus());
}

/**
 * WMT17 when SACREBLEU_DIR has the pickle, else the MultiWOZ responses when the data dir has them,
 * else why neither can run (an error under TODEVAL_REQUIRE_REFERENCES).
 */
export async function referenceCorpus(): Promise<ReferenceCorpus | string> {
  const why = sacrebleuMissing();
  const wmt17 = SACREBLEU_DIR && path.join(SACREBLEU_DIR, 'test', 'wmt17_en_de_systems.pkl.bz2');
  const mwz = path.join(DATA_DIR, 'multiwoz', 'predictions', `${MWZ_SYSTEMS.at(-1)}.json`);
  let reason: string;
  if (why) reason = why;
  else if (wmt17 && existsSync(wmt17)) {
    const w = await readWmt17(SACREBLEU_DIR!, SACREBLEU_PYTHON);
    return { kind: 'wmt17', label: `sacreBLEU's WMT17 test systems (${w.systems.length} systems x ${w.refs[0].length.toLocaleString('en-US')} segments)`, systems: w.systems, refs: w.refs };
  } else if (existsSync(mwz)) return await sharedMwzResponseCorpus();
  else reason = `neither ${wmt17} (a sacreBLEU git checkout has it) nor ${mwz} (the data dir) is present`;
  if (process.env.TODEVAL_REQUIRE_REFERENCES) throw new Error(`the sacreBLEU corpus comparisons must run here (TODEVAL_REQUIRE_REFERENCES is set): ${reason}`);
  return reason;
}

/** What sacrebleu-systems.py answers. */
export interface LiveSacrebleu {
  sacrebleu: string;
  /** sacreBLEU ran for this request ('live'), or its answer to the same request came from .cache/references/ (test/helpers/reference-memo.ts). */
  how: 'live' | 'remembered';
  scores: ({ system: string; tokenize: BleuTokenizerName; signature: string } & Omit<BleuNumbers, 'precisions' | 'bp'>)[];
  chrfTer: { metric: 'chrF' | 'chrF++' | 'TER'; system: string; score: number; stats: number[]; signature: string }[];
  tests: SacrebleuBleuTest[];
}

/** The live sacreBLEU's numbers for `corpus` (asynchronous: the worker's event loop stays free while Python runs). */
export async function liveSacrebleu(
  corpus: ReferenceCorpus,
  request: { bleu?: BleuTokenizerName[]; chrfTer?: ['chrF' | 'chrF++' | 'TER', string[]][]; tests?: { test: 'bs' | 'ar'; n: number; seed: number; bleu?: { tokenize?: BleuTokenizerName } }[] },
): Promise<LiveSacrebleu> {
  const r = await sacrebleuAnswer(SACREBLEU_PYTHON, path.join(REPO_ROOT, 'test', 'helpers', 'sacrebleu-systems.py'), SACREBLEU_DIR!, JSON.stringify({ refs: corpus.refs, systems: corpus.systems, ...request }));
  if (r.code !== 0) throw new Error(`sacrebleu-systems.py exited ${r.code}: ${r.stderr}`);
  return { ...(JSON.parse(r.stdout) as Omit<LiveSacrebleu, 'how'>), how: r.how };
}

import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { pythonImports } from './run-fixture.js';
import { REPO_ROOT } from './shared.js';
import type { NliPair } from '../../src/nli/types.js';
import { SAMPLE_PAIRS } from '../nli-fixtures.js';

/**
 * Tiny random-weight cross-encoders of each family (scripts/nli-families/: PyTorch modules written
 * from Hugging Face's modelling code, exported with torch.onnx) and their PyTorch logits, built
 * once and kept by content under .cache/models/: the key is the scripts' bytes and the job, so an
 * edit to either rebuilds, and a second run (or another test file asking for the same models)
 * starts no Python at all.
 */

/** The pairs every family's tiny model is checked on (against PyTorch): the sample pairs and three longer ones. */
export const FAMILY_PAIRS: NliPair[] = [
  ...SAMPLE_PAIRS,
  { premise: 'I want to book a table at Il Fornaio in San Jose. What about 7 pm on Monday?', hypothesis: 'The city is San Jose.' },
  { premise: 'There are no free rooms.', hypothesis: 'The hotel is cheap.' },
  { premise: 'The train leaves at 5 pm and arrives at 9 pm.', hypothesis: 'The train arrives at 9 pm.' },
];

export const TORCH_PYTHON = process.env.TORCH_PYTHON ?? '/usr/bin/python3';
const SCRIPT_DIR = path.join(REPO_ROOT, 'scripts', 'nli-families');
const SCRIPT = path.join(SCRIPT_DIR, 'tiny_cross_encoder.py');
const CACHE = path.join(REPO_ROOT, '.cache', 'models');
const run = promisify(execFile);

/**
 * Why the PyTorch side cannot run here, or undefined when it can. Asynchronous: importing torch
 * takes seconds on a loaded box, during which a blocked worker could not answer vitest.
 */
export async function torchMissing(): Promise<string | undefined> {
  const ok = await pythonImports(TORCH_PYTHON, ['torch', 'onnx']);
  return ok ? undefined : `${TORCH_PYTHON} cannot import torch and onnx (Debian: apt-get install python3-torch python3-onnx)`;
}

export interface TinyModelJob {
  /** Folder name of this model inside the built set. */
  name: string;
  family: 'bert' | 'electra' | 'deberta-v2' | 'bart';
  vocabSize: number;
  padId: number;
  labels?: 'three' | 'two';
  /** The export takes token_type_ids (BERT, ELECTRA; DeBERTa with type_vocab_size > 0). */
  segments?: boolean;
  seed?: number;
  std?: number;
}

/** One row for the PyTorch forward: token ids and segment ids, run alone (no padding). */
export interface TorchRow {
  ids: number[];
  typeIds: number[];
}

function scriptsDigest(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(SCRIPT_DIR).filter((n) => n.endsWith('.py')).sort()) h.update(f).update(readFileSync(path.join(SCRIPT_DIR, f)));
  return h.digest('hex');
}

function digest(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 16);
}

/** The script, asynchronously (torch takes seconds to start: the test worker keeps answering meanwhile); killed at the timeout. */
async function python(args: string[]): Promise<void> {
  try {
    await run(TORCH_PYTHON, [SCRIPT, ...args], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, timeout: 300_000, killSignal: 'SIGKILL' });
  } catch (e) {
    const err = e as { code?: number; signal?: string; stderr?: string };
    throw new Error(`tiny_cross_encoder.py ${args[0]} failed (${err.code ?? err.signal}): ${String(err.stderr ?? e).slice(-2000)}`);
  }
}

/** A fresh folder beside the cache's entries, renamed into place once complete (so a half-built set is never used). */
function scratch(): string {
  mkdirSync(CACHE, { recursive: true });
  const dir = path.join(CACHE, `.tmp-families-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  return dir;
}

function publish(tmp: string, target: string, done: string): void {
  try {
    renameSync(tmp, target);
  } catch (e) {
    // Another worker built the same set first: use theirs.
    if (!existsSync(done)) throw e;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The models of `jobs`, built once: returns the set's folder; each model is `<set>/<name>`, holding
 * onnx/model.onnx, config.json and torch-state.pt (the caller writes tokenizer.json beside them).
 */
export async function tinyCrossEncoders(jobs: TinyModelJob[]): Promise<string> {
  const set = path.join(CACHE, `tiny-families-${digest(scriptsDigest(), JSON.stringify(jobs))}`);
  const done = path.join(set, 'built.json');
  if (existsSync(done)) return set;
  const tmp = scratch();
  try {
    const job = jobs.map(({ name, ...rest }) => ({ ...rest, out: path.join(tmp, name) }));
    writeFileSync(path.join(tmp, 'job.json'), JSON.stringify(job));
    await python(['build', path.join(tmp, 'job.json')]);
    rmSync(path.join(tmp, 'job.json'));
    writeFileSync(path.join(tmp, 'built.json'), JSON.stringify(jobs));
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  publish(tmp, set, done);
  return set;
}

/**
 * PyTorch's logits of each model's rows (`[model][row][label]`), kept beside the models by the
 * rows' content: the same rows on the same models are computed once.
 */
export async function torchLogits(set: string, jobs: { name: string; rows: TorchRow[] }[]): Promise<number[][][]> {
  const file = path.join(set, `forward-${digest(JSON.stringify(jobs))}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as number[][][];
  const tmp = scratch();
  try {
    const job = path.join(tmp, 'forward.json');
    writeFileSync(job, JSON.stringify(jobs.map((j) => ({ dir: path.join(set, j.name), rows: j.rows }))));
    await python(['forward', job, path.join(tmp, 'logits.json')]);
    const text = readFileSync(path.join(tmp, 'logits.json'), 'utf8');
    // Written whole, then renamed: a reader never sees half a file.
    writeFileSync(path.join(tmp, 'out.json'), text);
    renameSync(path.join(tmp, 'out.json'), file);
    return JSON.parse(text) as number[][][];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

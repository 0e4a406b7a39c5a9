import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ONNX_BUILDER_VERSION } from '../src/nli/onnx-builder/index.js';
import { REPO_ROOT } from './helpers/shared.js';
import { cachedTinyModel } from './helpers/tiny-model.js';

/**
 * A tiny random RoBERTa whose weights are large enough (std 0.3) that different pairs get clearly
 * different probabilities: with the default std 0.02 every pair scores ~1/3 each, and a padding or
 * masking bug could hide under the 1e-4 tolerance.
 */
export const SENSITIVE_MODEL_DIR = path.join(REPO_ROOT, '.cache', 'models', `nli-test-tiny-std0.3-v${ONNX_BUILDER_VERSION}`);

export function getSensitiveTinyModelDir(): string {
  return cachedTinyModel(SENSITIVE_MODEL_DIR, { seed: 7, std: 0.3 });
}

/** A private copy of a model dir (to edit its config or damage its weights without touching the shared one). */
export function copyModelDir(src: string, edit?: (dir: string) => void): string {
  const dir = path.join(os.tmpdir(), `todeval-nli-${process.pid}-${Math.random().toString(36).slice(2)}`);
  cpSync(src, dir, { recursive: true });
  edit?.(dir);
  return dir;
}

export function editJson(file: string, f: (v: Record<string, unknown>) => void): void {
  const v = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  f(v);
  writeFileSync(file, JSON.stringify(v));
}

/** Realistic (system utterance, templated reference) pairs of varied lengths. */
export const SAMPLE_PAIRS = [
  { premise: 'I want to book a hair cut. What about Queens?', hypothesis: 'The name of the hair stylist is Queens.' },
  { premise: 'Sure. What time?', hypothesis: 'The time is 5 pm.' },
  { premise: 'There are 10 restaurants in San Jose that serve Italian food. Il Fornaio is a nice one in downtown.', hypothesis: 'The city is San Jose.' },
  { premise: 'There are 10 restaurants in San Jose that serve Italian food. Il Fornaio is a nice one in downtown.', hypothesis: 'The name of the restaurant is Il Fornaio.' },
  { premise: 'Your reservation is confirmed.', hypothesis: 'The reservation was successful.' },
  { premise: 'Is there anything else I can help you with?', hypothesis: 'Do you need anything else?' },
  { premise: 'The flight departs at 7:45 am from SFO and arrives at 11:10 am in Seattle; it costs $220 per person in economy.', hypothesis: 'The price is $220.' },
  { premise: 'ok', hypothesis: 'The destination is Seattle.' },
];

/**
 * A tiny random RoBERTa (std 0.15, seed 7) whose three probabilities often lie close together, so
 * that on real SGD turns the highest-entailment candidate is sometimes not the entailed one: the
 * case that separates `--reference-selection entailed` from the paper's literal rule.
 */
export const CLOSE_CALL_MODEL_DIR = path.join(REPO_ROOT, '.cache', 'models', `nli-test-tiny-std0.15-seed7-v${ONNX_BUILDER_VERSION}`);

export function getCloseCallTinyModelDir(): string {
  return cachedTinyModel(CLOSE_CALL_MODEL_DIR, { seed: 7, std: 0.15 });
}

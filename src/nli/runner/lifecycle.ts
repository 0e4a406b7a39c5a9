import { readJsonFile } from '../../util/json-file.js';
import { signatureFamily } from '../family.js';
import { labelIndexFromConfig, type LabelIndex } from '../labels.js';
import { signatureEncoding } from '../pair-encoding.js';
import { cpuKernelClass } from '../cpu-kernels.js';
import { Q8_SIGNATURE_DTYPE, resolveModelWithSignature, type NliDtype } from '../model-store.js';
import { openSession, type LogitsSession, type NliDevice } from '../session.js';
import { isTableLookupStandin } from '../onnx-builder/standins.js';
import { SessionThread } from '../session-thread.js';
import { TokenizerPool } from '../tokenizer-pool.js';
import { PairTokenizer } from '../tokenizer.js';
import type { NliModelSignature } from '../types.js';

export interface OpenOptions {
  model?: string;
  device?: NliDevice;
  dtype?: NliDtype;
  threads?: number;
  maxLength?: number;
  notice?: (line: string) => void;
  tokenizerThreads?: number;
  sessionThread?: boolean;
  verbose?: boolean;
}

/** What a runner is made of, all open: closed again by `closeParts`. */
export interface OpenParts {
  session: LogitsSession;
  tokenizer: PairTokenizer;
  tokenizerPool?: TokenizerPool;
  labels: LabelIndex;
  signature: NliModelSignature;
  /** config.json's `todeval_standin`: which of the project's stand-in graphs this is, if one. */
  standin?: string;
}


/**
 * Resolve the model, load tokenizer and labels, open the ONNX session (on its thread) and start the
 * tokenizer threads, the slow parts side by side. Whatever fails, everything already started is
 * closed again before the error is thrown: no thread outlives a failed open.
 */
export async function openParts(opts: OpenOptions): Promise<OpenParts> {
  const model = await resolveModelWithSignature(opts.model, opts.dtype);
  const config = readJsonFile<Record<string, unknown>>(model.configPath);
  const labels = labelIndexFromConfig(config, model.configPath);
  const standin = typeof config.todeval_standin === 'string' ? config.todeval_standin : undefined;
  // A stand-in's pass is a few table lookups: between two of them the intra-op threads would spin
  // through all the tokenizing and batching this thread does, so they sleep whatever the load (the
  // whole SGD ground truth with the lexical stand-in: 17.6 -> 11.8 CPU-s, and 9.9 -> 8.8 s wall, on
  // a quiet 2-core machine). A language model's pass is long enough for spinning to pay (session.ts).
  const spin = isTableLookupStandin(standin) ? { spin: false } : {};
  const sessionOptions = { device: opts.device, threads: opts.threads, notice: opts.notice, verbose: opts.verbose, ...spin };
  // The session thread loads the model while this thread parses the tokenizer.
  const opening = opts.sessionThread === false ? undefined : SessionThread.open(model.onnxPath, sessionOptions);
  opening?.catch(() => undefined); // its failure is awaited below
  let tokenizer: PairTokenizer;
  try {
    tokenizer = PairTokenizer.fromFiles(model.tokenizerPath, model.tokenizerConfigPath, config, { maxLength: opts.maxLength });
  } catch (e) {
    await opening?.then((s) => s.release(), () => undefined);
    throw e;
  }
  const threads = opts.tokenizerThreads ?? 0;
  // Started while the session loads: each thread parses the tokenizer on its own.
  const pool = threads > 0 ? TokenizerPool.start(tokenizer, threads) : undefined;
  pool?.catch(() => undefined); // its failure is awaited below
  let session: LogitsSession;
  try {
    session = opening ? await opening : await openSession(model.onnxPath, sessionOptions);
  } catch (e) {
    await pool?.then((p) => p.close(), () => undefined);
    throw e;
  }
  let tokenizerPool: TokenizerPool | undefined;
  try {
    tokenizerPool = await pool;
  } catch (e) {
    await session.release();
    throw e;
  }
  // The family and pair encoding come from the files just read: named unless RoBERTa's.
  const family = signatureFamily(tokenizer.family);
  const pairEncoding = signatureEncoding(tokenizer.pairEncoding.template);
  // q8-row2 is bit-identical across CPUs of one float-kernel class only: the class joins its signature.
  const kernels = model.signature.dtype === Q8_SIGNATURE_DTYPE.row && session.device === 'cpu' ? await cpuKernelClass() : undefined;
  // A shorter truncation changes long pairs' scores: it joins the signature (the model's own limit does not, so default runs keep theirs).
  const maxLength = tokenizer.signedMaxLength;
  const signature: NliModelSignature = {
    ...model.signature,
    ...(family !== undefined ? { family } : {}),
    ...(pairEncoding !== undefined ? { pairEncoding } : {}),
    ...(kernels !== undefined ? { kernels } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
  };
  return { session, tokenizer, tokenizerPool, labels, signature, ...(standin !== undefined ? { standin } : {}) };
}

/**
 * Runs every step of a shutdown in order, each whatever the ones before did, and settles once all
 * have: with the first error, if any. So close() always returns, and never leaves a thread behind
 * because an earlier step failed.
 */
export async function closeInOrder(steps: (() => unknown)[]): Promise<void> {
  let first: { error: unknown } | undefined;
  for (const step of steps) {
    try {
      await step();
    } catch (e) {
      first ??= { error: e };
    }
  }
  if (first) throw first.error;
}

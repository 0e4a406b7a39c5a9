/** Probabilities of the three MNLI classes for one (premise, hypothesis) pair. */
export interface NliProbs {
  entailment: number;
  neutral: number;
  contradiction: number;
}

export type NliLabel = keyof NliProbs;

export interface NliPair {
  premise: string;
  hypothesis: string;
}

/** What identifies an NLI model's outputs: goes into every signature and cache key. */
export interface NliModelSignature {
  modelId: string;
  revision: string;
  dtype: string;
  /** config.json's model_type; absent for RoBERTa (signatureFamily in family.ts). */
  family?: string;
  /** The pair template with segment ids; absent for RoBERTa's (signatureEncoding in pair-encoding.ts). */
  pairEncoding?: string;
  /**
   * The CPU's float-kernel class (cpu-kernels.ts: fma, no-fma, or probe-<hash>), for q8-row2 on the
   * CPU only: its scores are bit-identical within a class and differ across classes.
   */
  kernels?: string;
  /**
   * The token limit per pair, only where shorter than the model's own (PairTokenizer.naturalMaxLength;
   * the library's nli.maxLength): truncation changes the scores of long pairs, so references and
   * results scored with it never compare equal to others. Absent at the model's own limit, so
   * default runs keep their signatures.
   */
  maxLength?: number;
}

/** Every key modelSignatureFields may write: what names the model in a signature, for lists of the keys that must agree. */
export const MODEL_SIGNATURE_KEYS = ['model', 'revision', 'dtype', 'family', 'pairEncoding', 'kernels', 'maxLength'] as const;

/**
 * A model's signature keys: id, revision and dtype, then its family and pair encoding where they
 * are not RoBERTa's, so runs with different pair encodings never compare equal; the kernel class
 * and a shortened token limit where the runner set them.
 */
export function modelSignatureFields(s: NliModelSignature): { model: string; revision: string; dtype: string; family?: string; pairEncoding?: string; kernels?: string; maxLength?: number } {
  return {
    model: s.modelId,
    revision: s.revision,
    dtype: s.dtype,
    ...(s.family !== undefined ? { family: s.family } : {}),
    ...(s.pairEncoding !== undefined ? { pairEncoding: s.pairEncoding } : {}),
    ...(s.kernels !== undefined ? { kernels: s.kernels } : {}),
    ...(s.maxLength !== undefined ? { maxLength: s.maxLength } : {}),
  };
}

/** How a scorer takes one call's pairs. */
export interface ScoreOptions {
  /**
   * Batch this call's new pairs among themselves, after everything submitted before and before
   * anything submitted later (a scorer without batching may ignore it).
   */
  separate?: boolean;
}

/**
 * Anything that turns pairs into probabilities. The product's implementation is the batched ONNX
 * runner; unit tests of scoring logic use a clearly named fake.
 */
export interface NliScorer {
  readonly modelSignature: NliModelSignature;
  score(pairs: NliPair[], options?: ScoreOptions): Promise<NliProbs[]>;
  /** Texts that will be sides of pairs soon: a scorer may prepare them (tokenize) meanwhile. */
  prefetch?(texts: Iterable<string>): void;
}

/** Argmax label; entailment means the premise entails the hypothesis. */
export function argmaxLabel(p: NliProbs): NliLabel {
  if (p.entailment >= p.neutral && p.entailment >= p.contradiction) return 'entailment';
  return p.neutral >= p.contradiction ? 'neutral' : 'contradiction';
}

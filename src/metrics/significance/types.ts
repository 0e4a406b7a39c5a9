/**
 * What the significance room needs from a metric: a score computed from the column sums of
 * per-item sufficient statistics. Every metric todeval resamples is of that form (BLEU's n-gram
 * counts, a rate's numerator and denominator, a mean's total and count), so a resample costs one
 * sum per column instead of re-running the metric (or the NLI model behind it).
 */
export interface StatMetric {
  /** Display name, e.g. 'BLEU', 'SGSAcc'. */
  readonly name: string;
  /** Statistics per item (the row width). */
  readonly width: number;
  /** The score of the summed statistics at sums[offset .. offset + width). */
  score(sums: ArrayLike<number>, offset: number): number;
  /**
   * The score as sacreBLEU computes it from a bootstrap resample's float32 sums, where that
   * differs: under NumPy 1.x a ratio of two float32 sums is a float32 (chrF's precision and
   * recall, TER's edits over length), while BLEU's arithmetic is float64 throughout. Used by the
   * `float32` resampling option; absent, `score` is used.
   */
  scoreFloat32?(sums: ArrayLike<number>, offset: number): number;
  /** How to rebuild the metric from a file that stores its rows (a per-item statistics file). */
  readonly spec?: MetricSpec;
  /**
   * The metric's float rule: bootstrap sums in float32, as sacreBLEU sums BLEU's statistics. Read
   * by every test that resamples the metric (bleu, compare, report, --confidence), so that they
   * agree once sums pass 2^24; absent: exact float64 sums.
   */
  readonly float32?: boolean;
}

/** A stored metric's score function: a rate (scale * num / (den + epsilon)), or sacreBLEU's BLEU, chrF or TER. */
export type MetricSpec =
  | { type: 'ratio'; scale: number; epsilon: number }
  | { type: 'bleu'; options: { tokenize?: string; lowercase?: boolean; smoothMethod?: string; smoothValue?: number; effectiveOrder?: boolean } }
  | { type: 'chrf'; options: { charOrder?: number; wordOrder?: number; beta?: number; lowercase?: boolean; whitespace?: boolean; epsSmoothing?: boolean } }
  // TER's score is edits over length whatever its options (they act on the statistics, not the score).
  | { type: 'ter' };

/**
 * One system's statistics: `width` numbers per item, rows in item order (item i at i * width).
 * Paired tests need the same items in the same order for every system.
 */
export type ItemStats = ArrayLike<number>;

/** sacreBLEU's per-system result: `pValue` null for the baseline, mean/ci null when not estimated. */
export interface SystemResult {
  /** The metric on all items. */
  score: number;
  /** Paired test against the baseline: (c + 1) / (samples + 1), or 1 for identical statistics. */
  pValue: number | null;
  /** Mean of the bootstrap scores. */
  mean: number | null;
  /** Half the width of the 95% interval: (upper - lower) / 2, sacreBLEU's "±". */
  ci: number | null;
  /** The interval's bounds: the n//40-th bootstrap score from each end (sorted). */
  low: number | null;
  high: number | null;
}

export interface ConfidenceResult {
  score: number;
  mean: number;
  ci: number;
  low: number;
  high: number;
}

// What sacreBLEU 2.6.0 computed, as scripts/significance-fixtures.py and
// scripts/text-metric-fixtures.py wrote it to test/fixtures/significance/: the fixture files'
// shapes, described once for the suites that check our numbers (library and CLI) against them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BleuResult } from '../../src/metrics/text/bleu.js';
import type { BleuTokenizerName } from '../../src/metrics/text/bleu-tokenizers.js';
import type { ChrfOptions } from '../../src/metrics/text/chrf.js';
import type { TerOptions } from '../../src/metrics/text/ter.js';
import { REPO_ROOT } from './shared.js';

export const SIGNIFICANCE_FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'significance');

/** A fixture file of test/fixtures/significance, parsed. */
export function loadFixture<T>(name: string): T {
  return JSON.parse(readFileSync(path.join(SIGNIFICANCE_FIXTURES, name), 'utf8')) as T;
}

/** One system's line of a sacreBLEU paired test (the baseline's pValue is null). */
export interface SacrebleuSystemResult {
  name: string;
  score: number;
  pValue: number | null;
  mean: number | null;
  ci: number | null;
}

/** BLEU's numbers as sacreBLEU reports them, in our field names. */
export type BleuNumbers = Omit<BleuResult, 'signature'>;

/** The synthetic corpus both fixtures score: reference streams and systems, one line per segment. */
export interface SyntheticCorpus {
  references: string[][];
  systems: Record<string, string[]>;
}

export interface SacrebleuBleuTest {
  test: 'bs' | 'ar';
  n: number;
  seed: number;
  nArConfidence: number;
  bleu: { tokenize?: BleuTokenizerName; lowercase?: boolean };
  signature: string;
  systems: SacrebleuSystemResult[];
}

export interface SacrebleuBleuConfidence {
  system: string;
  n: number;
  seed: number;
  bleu: { tokenize?: BleuTokenizerName; lowercase?: boolean };
  signature: string;
  score: number;
  mean: number;
  ci: number;
}

/** bleu-synthetic.json. */
export interface BleuSynthetic {
  sacrebleu: string;
  corpus: SyntheticCorpus;
  scores: ({ system: string; tokenize: BleuTokenizerName; lowercase: boolean; nrefs: number; signature: string } & BleuNumbers)[];
  tokenized: Record<BleuTokenizerName, string[]>;
  tests: SacrebleuBleuTest[];
  confidence: SacrebleuBleuConfidence[];
}

export interface TextCorpusEntry<O> {
  options: O;
  system: string;
  nrefs: number;
  score: number;
  stats: number[];
  signature: string;
  name: string;
}

/** chrf-ter-synthetic.json: chrF and TER of the same corpus, sentence scores, tests and intervals. */
export interface ChrfTerSynthetic {
  chrf: TextCorpusEntry<ChrfOptions>[];
  ter: TextCorpusEntry<TerOptions>[];
  sentence: { system: string; segments: number; chrf: { options: ChrfOptions; scores: number[] }[]; ter: { options: TerOptions; scores: number[] }[] };
  terTokenized: { options: TerOptions; lines: string[] }[];
  tests: { test: 'bs' | 'ar'; n: number; seed: number; nArConfidence: number; metrics: Record<string, { signature: string; systems: SacrebleuSystemResult[] }> }[];
  confidence: { metric: 'chrf' | 'ter'; options: ChrfOptions & TerOptions; system: string; n: number; seed: number; signature: string; score: number; mean: number; ci: number }[];
}

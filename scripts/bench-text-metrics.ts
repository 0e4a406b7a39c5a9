/**
 * Timings and paper comparison for the text metrics on the five published MultiWOZ prediction
 * files: response normalization (lower-case, slot names, Moses tokenize + detokenize), lexical
 * richness, and sacreBLEU corpus BLEU against the span-delexicalized gold responses.
 *
 *   npx tsx scripts/bench-text-metrics.ts [--data-dir DIR]
 *
 * Prints our values next to Tables 4 (first row) and 6 of "Shades of BLEU" and the time per part.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveDataDir } from '../src/data/data-dir.js';
import { loadGroundTruth } from '../src/metrics/mwz/ground-truth.js';
import { corpusBleu } from '../src/metrics/text/bleu.js';
import { lexicalRichness } from '../src/metrics/text/richness.js';
import { normalizeResponse } from '../src/metrics/text/normalize-response.js';

// Table 4 (MWZ 2.2 references) and Table 6 of seeds/shades-of-bleu-multiwoz-evaluation.txt.
const PAPER: Record<string, { bleu: number; uni: number; tri: number; ent: number; cond: number; msttr: number; len: number }> = {
  damd: { bleu: 16.4, uni: 212, tri: 1755, ent: 6.12, cond: 1.65, msttr: 0.62, len: 14.27 },
  augpt: { bleu: 16.8, uni: 608, tri: 5843, ent: 6.62, cond: 2.15, msttr: 0.7, len: 12.9 },
  hdsa: { bleu: 20.7, uni: 259, tri: 2019, ent: 6.16, cond: 1.64, msttr: 0.67, len: 14.42 },
  uniconv: { bleu: 18.1, uni: 338, tri: 2932, ent: 6.46, cond: 1.79, msttr: 0.69, len: 14.17 },
  lava: { bleu: 10.8, uni: 176, tri: 708, ent: 5.5, cond: 1.27, msttr: 0.54, len: 13.28 },
};

const flag = process.argv.indexOf('--data-dir');
const dataDir = resolveDataDir(flag >= 0 ? process.argv[flag + 1] : undefined).dir;
const ms = (t0: number) => (performance.now() - t0).toFixed(0);

let t0 = performance.now();
const gt = loadGroundTruth(dataDir, { noCache: true });
const refs = new Map<string, string[]>();
for (const [id, d] of Object.entries(gt.dialogues)) refs.set(id, d.references.map((r) => normalizeResponse(r).text));
console.log(`references (${gt.source}): built and normalized in ${ms(t0)} ms`);

const refRichness = lexicalRichness([...refs.values()].flat());
console.log(
  `reference richness: uni ${refRichness.num_unigrams} (paper 1407)  tri ${refRichness.num_trigrams} (25212)  ` +
    `H ${refRichness.entropy.toFixed(2)} (7.21)  condH ${refRichness.cond_entropy.toFixed(2)} (3.37)  ` +
    `msttr ${refRichness.msttr.toFixed(2)} (0.75)  len ${refRichness.avg_lengths.toFixed(2)} (14.07)`,
);

console.log('\nsystem   turns  BLEU (paper)   uni (paper)  tri (paper)   H     condH  msttr  len    | normalize  richness  bleu ms');
for (const [system, paper] of Object.entries(PAPER)) {
  const file = path.join(dataDir, 'multiwoz', 'predictions', `${system}.json`);
  const dialogs = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Array<{ response: string }>>;

  t0 = performance.now();
  const hyps: string[] = [];
  const golds: string[] = [];
  for (const [id, turns] of Object.entries(dialogs)) {
    turns.forEach((t, i) => {
      hyps.push(normalizeResponse(t.response).text);
      golds.push(refs.get(id)?.[i] ?? '');
    });
  }
  const tNorm = ms(t0);

  t0 = performance.now();
  const r = lexicalRichness(hyps);
  const tRich = ms(t0);

  t0 = performance.now();
  const b = corpusBleu(hyps, [golds]);
  const tBleu = ms(t0);

  console.log(
    `${system.padEnd(8)} ${String(hyps.length).padStart(5)}  ${b.score.toFixed(2)} (${paper.bleu.toFixed(1)})  ` +
      `${String(r.num_unigrams).padStart(4)} (${paper.uni})   ${String(r.num_trigrams).padStart(5)} (${paper.tri})  ` +
      `${r.entropy.toFixed(2)}  ${r.cond_entropy.toFixed(2)}   ${r.msttr.toFixed(2)}   ${r.avg_lengths.toFixed(2)}  | ` +
      `${tNorm.padStart(6)}     ${tRich.padStart(5)}    ${tBleu.padStart(5)}`,
  );
}
console.log(`\nsignature: ${corpusBleu(['a'], [['a']]).signature}`);

// A signature names everything that decides the numbers: two runs that differ in such a setting
// must never compare equal (compare refuses them, the report never takes one's per-turn file for
// the other's). Each case below is a setting that once changed the numbers without changing the
// signature, or one that the report's matching of per-turn files to runs left out.
import { describe, expect, it } from 'vitest';
import { mergeResultModel } from '../../src/metrics/mwz/sgsacc-merge.js';
import { mwzSignature } from '../../src/metrics/mwz/signature.js';
import { resolveSgsaccConfig, type SgsaccSettings } from '../../src/metrics/sgsacc/config.js';
import { evaluateSgsaccSignature, referencesSignature, sgsaccResultSignature } from '../../src/metrics/sgsacc/signature.js';
import { modelSignatureFields, type NliModelSignature } from '../../src/nli/types.js';
import { matchTurnsToRuns, type ReportRun, type TurnsFile } from '../../src/report/html/runs.js';
import { resolveRerankConfig } from '../../src/rerank/config.js';
import { rerankSignature } from '../../src/rerank/signature.js';
import { SGSACC_KEYS } from '../../src/shard/evaluate-merge.js';
import { extendSignature, formatSignature, signatureDifferences, systemsNotComparable, type Signature, type SignedRunKind } from '../../src/util/signature.js';

const MODEL: NliModelSignature = { modelId: 'local:fake', revision: 'r1', dtype: 'fp32' };
const Q8: NliModelSignature = { modelId: 'local:q8', revision: 'r1', dtype: 'q8-row2' };

/** Why two runs of one kind cannot be compared (compare's and the report's rule), or null. */
const whyNot = (kind: SignedRunKind, a: Signature, b: Signature) => systemsNotComparable({ kind, signature: a }, { kind, signature: b });

describe('the report gives each run its own per-turn file', () => {
  /** A score run's report and per-turn signatures, as score-turns.ts builds them. */
  function scoreRun(settings: SgsaccSettings, o: { schema?: string; model?: NliModelSignature } = {}): { report: Signature; turns: Signature } {
    const config = resolveSgsaccConfig(settings, 'score');
    const refs = referencesSignature({ model: o.model ?? MODEL, rulesHash: 'r1', dataset: 'sgd', source: 'sgd:test@0123456789ab', schema: o.schema, ...config.referencesFields });
    const who = { system: 'sys', predictions: 'preds.jsonl@aaaaaaaaaaaa' };
    return {
      // The report also signs --limit and the turns left without a prediction; its per-turn file does not.
      report: sgsaccResultSignature(refs, 'sgsacc', config, { limit: null, ...who }, { missingPredictions: 2 }),
      turns: sgsaccResultSignature(refs, 'sgsacc-turns', config, who),
    };
  }

  function reportRun(file: string, signature: Signature): ReportRun {
    return {
      name: file,
      file,
      kind: 'score',
      signature,
      signatureText: formatSignature(signature),
      model: null,
      standin: false,
      sgsacc: null,
      counts: null,
      contextControl: signature.contextControl === true,
      ser: null,
      bleu: null,
      inform: null,
      success: null,
      richness: null,
      confidence: null,
    };
  }

  const turnsFile = (file: string, signature: Signature): TurnsFile => ({ file, signature, turns: [] });

  // Two runs of the same system that differ in one setting only; the per-turn files are given in
  // the other order than the runs, so a file that matched both runs went to the first (the wrong one).
  const cases: [string, ReturnType<typeof scoreRun>, ReturnType<typeof scoreRun>][] = [
    ['another --schema', scoreRun({}, { schema: 'my/a.json@111111111111' }), scoreRun({}, { schema: 'my/b.json@222222222222' })],
    ['--hallucination', scoreRun({}), scoreRun({ hallucination: true })],
    ['--granularity sentence', scoreRun({ hallucination: true }), scoreRun({ granularity: 'sentence' })],
    ['q8-row2 on CPUs of another float-kernel class', scoreRun({}, { model: { ...Q8, kernels: 'fma' } }), scoreRun({}, { model: { ...Q8, kernels: 'no-fma' } })],
    ['a truncation shorter than the model\'s own (nli.maxLength)', scoreRun({}), scoreRun({}, { model: { ...MODEL, maxLength: 128 } })],
  ];
  for (const [what, a, b] of cases) {
    it(`runs that differ only in ${what} each get their own file`, () => {
      const runs = [reportRun('a.json', a.report), reportRun('b.json', b.report)];
      const matched = matchTurnsToRuns(runs, [turnsFile('b.turns.jsonl', b.turns), turnsFile('a.turns.jsonl', a.turns)]);
      expect(matched.get(0)?.file).toBe('a.turns.jsonl');
      expect(matched.get(1)?.file).toBe('b.turns.jsonl');
    });
  }

  it('a per-turn file of another schema matches no run (one line naming it)', () => {
    const a = scoreRun({}, { schema: 'my/a.json@111111111111' });
    const b = scoreRun({}, { schema: 'my/b.json@222222222222' });
    expect(() => matchTurnsToRuns([reportRun('a.json', a.report)], [turnsFile('b.turns.jsonl', b.turns)])).toThrow(/matches no run given/);
  });
});

describe('evaluate --sgsacc signs what decides its SGSAcc numbers', () => {
  const mwz = mwzSignature({ data: 'multiwoz@0123456789ab', bleu: 'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0', success: true, dialogues: 10, skipped: 0 });
  const signed = { rules: 'r1', schema: 'multiwoz/schema.json@feedbeef0123' };
  /** An evaluate --items signature (the predictions named) with the --sgsacc section's fields. */
  const items = (s: Omit<Parameters<typeof evaluateSgsaccSignature>[1], 'referenceSelection'>) =>
    extendSignature(evaluateSgsaccSignature(mwz, { referenceSelection: 'entailed', ...s }), { predictions: 'multiwoz/predictions/x.json@0123456789ab' });

  it('the float-kernel class of a q8-row2 run on the CPU, as score signs it', () => {
    // The model as evaluate --sgsacc records it keeps every field of the runner's signature.
    const full: NliModelSignature = { ...Q8, family: 'deberta-v2', pairEncoding: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1', kernels: 'no-fma' };
    expect(mergeResultModel(full)).toEqual(full);
    const fma = items({ signed, model: mergeResultModel({ ...Q8, kernels: 'fma' }) });
    const noFma = items({ signed, model: mergeResultModel({ ...Q8, kernels: 'no-fma' }) });
    expect(fma.kernels).toBe('fma');
    expect(whyNot('evaluate-items', fma, noFma)).toBe('kernels: fma vs no-fma');
    // Another dtype has no class: nothing added.
    expect(mergeResultModel(MODEL)).toEqual(MODEL);
  });

  it('validation and the context pass, when a library call turns them off', () => {
    const model = mergeResultModel(MODEL);
    const defaults = items({ signed, model });
    // The defaults sign neither (evaluate's CLI has no flag for them): existing runs keep their signatures.
    expect(defaults.validation).toBeUndefined();
    expect(defaults.context).toBeUndefined();
    const unvalidated = items({ signed: { ...signed, validation: false }, model });
    const noContext = items({ signed: { ...signed, context: false }, model });
    expect(unvalidated.validation).toBe(false);
    expect(whyNot('evaluate-items', defaults, unvalidated)).toBe('validation: not set vs false');
    expect(whyNot('evaluate-items', defaults, noContext)).toBe('context: not set vs false');
  });

  it('merge knows every key the section may add: a shard without lexicalized turns lacks them all, the shards that scored must agree on them', () => {
    const full = evaluateSgsaccSignature(mwz, {
      signed: { ...signed, validation: false, context: false },
      model: mergeResultModel({ ...Q8, family: 'deberta-v2', pairEncoding: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1', kernels: 'fma', maxLength: 128 }),
      referenceSelection: 'paper',
      contextControl: true,
      sentences: {},
      skipDelexicalized: true,
    });
    const added = Object.keys(full).filter((k) => full[k] !== undefined && mwz[k] === undefined);
    expect(added.length).toBeGreaterThan(0);
    // Was: family, pairEncoding (and now kernels, validation, context) missing, so an unscored shard
    // of a DeBERTa run was refused as "not the same run" for lacking them.
    expect(added.filter((k) => !SGSACC_KEYS.includes(k))).toEqual([]);
  });
});

describe('rerank signs the schema its context premises were written from', () => {
  const ground = { model: MODEL, rulesHash: 'r1', dataset: 'sgd' };
  const config = resolveRerankConfig({});

  it('rerankings with another --schema are not comparable; the data dir schema signs nothing (earlier files keep their signatures)', () => {
    const a = rerankSignature(config, { ...ground, schema: 'my/a.json@111111111111' });
    const b = rerankSignature(config, { ...ground, schema: 'my/b.json@222222222222' });
    expect(whyNot('rerank', a, b)).toBe('schema: my/a.json@111111111111 vs my/b.json@222222222222');
    expect(formatSignature(rerankSignature(config, ground))).not.toContain('schema');
  });
});

describe('a truncation shorter than the model\'s own is signed (nli.maxLength)', () => {
  const SHORT: NliModelSignature = { ...MODEL, maxLength: 128 };
  const config = resolveSgsaccConfig({}, 'score');
  const refs = (model: NliModelSignature) => referencesSignature({ model, rulesHash: 'r1', dataset: 'sgd', source: 'sgd:test@0123456789ab', ...config.referencesFields });
  const who = { system: 'sys', predictions: 'preds.jsonl@aaaaaaaaaaaa' };

  it('stored references, per-turn files and reports that differ only in it are not comparable', () => {
    // Was: the same signatures, so references and per-turn files were reused across truncation
    // lengths and compare accepted the two runs.
    expect(signatureDifferences(refs(MODEL), refs(SHORT))).toEqual(['maxLength: not set vs 128']);
    const turns = (m: NliModelSignature) => sgsaccResultSignature(refs(m), 'sgsacc-turns', config, who);
    const report = (m: NliModelSignature) => sgsaccResultSignature(refs(m), 'sgsacc', config, { limit: null, ...who });
    expect(whyNot('score-turns', turns(MODEL), turns(SHORT))).toBe('maxLength: not set vs 128');
    expect(whyNot('score', report(MODEL), report(SHORT))).toBe('maxLength: not set vs 128');
    const rerank = (m: NliModelSignature) => rerankSignature(resolveRerankConfig({}), { model: m, rulesHash: 'r1', dataset: 'sgd' });
    expect(whyNot('rerank', rerank(MODEL), rerank(SHORT))).toBe('maxLength: not set vs 128');
  });

  it('evaluate --sgsacc keeps it in its model and signs it as score does', () => {
    expect(mergeResultModel(SHORT)).toEqual(SHORT);
    const mwz = mwzSignature({ data: 'multiwoz@0123456789ab', bleu: 'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0', success: true, dialogues: 10, skipped: 0 });
    const evaluate = (m: NliModelSignature) => evaluateSgsaccSignature(mwz, { signed: { rules: 'r1', schema: 'multiwoz/schema.json@feedbeef0123' }, model: mergeResultModel(m), referenceSelection: 'entailed' });
    expect(whyNot('evaluate', evaluate(MODEL), evaluate(SHORT))).toBe('maxLength: not set vs 128');
  });

  it('the model\'s own limit signs nothing: default runs keep their signatures', () => {
    expect(modelSignatureFields(MODEL)).toEqual({ model: 'local:fake', revision: 'r1', dtype: 'fp32' });
    expect(Object.keys(refs(MODEL))).not.toContain('maxLength');
    expect(formatSignature(refs(MODEL))).not.toContain('maxLength');
  });
});

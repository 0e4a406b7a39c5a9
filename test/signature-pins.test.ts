import { describe, expect, it } from 'vitest';
import { mwzSignature } from '../src/metrics/mwz/signature.js';
import { gcdf1Signature } from '../src/metrics/gcdf1/signature.js';
import { evaluateSgsaccSignature, referencesSignature, resolveSgsaccConfig, sgsaccResultSignature, type SgsaccProduct, type SgsaccSettings } from '../src/metrics/sgsacc/index.js';
import { nliSignature } from '../src/nli/signature.js';
import { refsSignature } from '../src/pipeline/refs.js';
import { serSignature } from '../src/pipeline/ser.js';
import { rerankSignature, resolveRerankConfig, type RerankSettings } from '../src/rerank/index.js';
import { extendSignature, formatSignature, type Signature } from '../src/util/signature.js';
import { TODEVAL_VERSION } from '../src/util/version.js';

// Every product's signature from its one builder, for fixed inputs, pinned as JSON (key order
// included: reports and stores are written with it) and as the printed `key:value|...` text. A
// change to a builder that moves a key, drops one or changes a value fails here by name; the
// version is the installed package's, so it is left out of the pins.
// The pins of the SGSAcc, rerank and NLI builders were taken from the code before they moved into
// one builder per product (the same strings from both); the others' builders came out of their
// pipelines unchanged, checked byte for byte on each command's outputs.
const model = { modelId: 'cross-encoder/nli-deberta-v3-base', revision: 'abc123', dtype: 'q8', family: 'deberta-v2', pairEncoding: 'cls-a-sep-b-sep:01' };

function pin(s: Signature): { json: string; text: string } {
  expect(s.version).toBe(TODEVAL_VERSION);
  const fixed = { ...s, version: 'V' };
  return { json: JSON.stringify(fixed), text: formatSignature(fixed) };
}

function sgsacc(settings: SgsaccSettings, product: SgsaccProduct): Record<string, Signature> {
  const config = resolveSgsaccConfig(settings, product);
  const references = referencesSignature({ model, rulesHash: 'r1', dataset: 'sgd', source: 'sgd/test@0123456789ab', schema: 'schema.json@feedbeef', ...config.referencesFields });
  return {
    references,
    turns: sgsaccResultSignature(references, 'sgsacc-turns', config, { system: 'sys', predictions: 'd1' }, { shard: '1/2' }),
    report: sgsaccResultSignature(references, 'sgsacc', config, { limit: null, system: 'sys', predictions: 'gold' }, { missingPredictions: 3, shard: undefined }),
    serve: sgsaccResultSignature(references, 'sgsacc-turns', config),
  };
}

const rerank = (settings: RerankSettings) => rerankSignature(resolveRerankConfig(settings), { model, rulesHash: 'r1', dataset: 'sgd' });

const mwz = mwzSignature({
  data: 'multiwoz@0123456789ab',
  bleu: 'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0',
  chrf: { name: 'chrF2', signature: 'nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.4.0' },
  ter: 'nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.4.0',
  success: true,
  dst: false,
  stateSource: 'predicted',
  domainSource: 'goal',
  dataDir: 'flag',
  dialogues: 1000,
  skipped: 2,
});

const PRODUCTS: Record<string, () => Signature> = {
  'score (defaults): references': () => sgsacc({}, 'score').references,
  'score (defaults): per-turn file of a shard': () => sgsacc({}, 'score').turns,
  'score (defaults): report': () => sgsacc({}, 'score').report,
  'score (every option): references': () => sgsacc({ hallucination: true, granularity: 'sentence', contextControl: true, referenceSelection: 'paper', validation: false }, 'score').references,
  'score (every option): report': () => sgsacc({ hallucination: true, granularity: 'sentence', contextControl: true, referenceSelection: 'paper', validation: false }, 'score').report,
  'serve (defaults): per-turn results': () => sgsacc({}, 'serve').serve,
  'rerank (defaults)': () => rerank({}),
  'rerank (every option)': () => rerank({ context: false, hallucination: true, rankBy: 'omission-sentences', systemOrder: ['b', 'a'] }),
  'rerank shard': () => extendSignature(rerank({}), { shard: '2/4' }),
  nli: () => nliSignature({ modelSignature: model, maxLength: 512, device: 'cpu' }),
  evaluate: () => mwz,
  'evaluate --sgsacc': () => evaluateSgsaccSignature(mwz, { signed: { rules: 'r1', schema: 'schema.json@feedbeef' }, model, referenceSelection: 'entailed', contextControl: true, sentences: {}, skipDelexicalized: true }),
  'evaluate --items (predictions named)': () => extendSignature(mwz, { predictions: 'multiwoz/predictions/augpt.json@0123456789ab' }),
  gcdf1: () => gcdf1Signature({ config: { igcd_f1: { value_matching: { use_canonical_map: true } } }, configFile: 'published-defaults', canonicalMap: 'none', data: 'gcdf1/test@0123456789ab', dialogues: 10, skipped: 0, limit: 10, shard: '1/2' }),
  ser: () => serSignature({ dataset: 'sgd', data: 'sgd/test@0123456789ab', schema: 'sgd/test/schema.json@feedbeef', predictions: 'ground-truth', robust: true, canonicalMap: 'none', limit: 5, skipped: 0, missingPredictions: 2 }),
  refs: () => refsSignature({ rulesHash: 'r1', dataset: 'sgd', data: 'sgd/test@0123456789ab', limit: 20 }),
};

const PINNED: Record<string, { json: string; text: string }> = {
  'score (defaults): references': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc-references","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","data":"sgd/test@0123456789ab","schema":"schema.json@feedbeef","validation":true,"context":true,"referenceSelection":"entailed"}',
    text: 'tool:todeval|version:V|context:true|data:sgd/test@0123456789ab|dataset:sgd|dtype:q8|family:deberta-v2|metric:sgsacc-references|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|referenceSelection:entailed|revision:abc123|rules:r1|schema:schema.json@feedbeef|validation:true',
  },
  'score (defaults): per-turn file of a shard': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc-turns","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","data":"sgd/test@0123456789ab","schema":"schema.json@feedbeef","validation":true,"context":true,"referenceSelection":"entailed","system":"sys","predictions":"d1","shard":"1/2"}',
    text: 'tool:todeval|version:V|context:true|data:sgd/test@0123456789ab|dataset:sgd|dtype:q8|family:deberta-v2|metric:sgsacc-turns|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|predictions:d1|referenceSelection:entailed|revision:abc123|rules:r1|schema:schema.json@feedbeef|shard:1/2|system:sys|validation:true',
  },
  'score (defaults): report': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","data":"sgd/test@0123456789ab","schema":"schema.json@feedbeef","validation":true,"context":true,"referenceSelection":"entailed","limit":null,"system":"sys","predictions":"gold","missingPredictions":3}',
    text: 'tool:todeval|version:V|context:true|data:sgd/test@0123456789ab|dataset:sgd|dtype:q8|family:deberta-v2|limit:null|metric:sgsacc|missingPredictions:3|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|predictions:gold|referenceSelection:entailed|revision:abc123|rules:r1|schema:schema.json@feedbeef|system:sys|validation:true',
  },
  'score (every option): references': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc-references","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","data":"sgd/test@0123456789ab","schema":"schema.json@feedbeef","validation":false,"context":true,"referenceSelection":"paper"}',
    text: 'tool:todeval|version:V|context:true|data:sgd/test@0123456789ab|dataset:sgd|dtype:q8|family:deberta-v2|metric:sgsacc-references|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|referenceSelection:paper|revision:abc123|rules:r1|schema:schema.json@feedbeef|validation:false',
  },
  'score (every option): report': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","data":"sgd/test@0123456789ab","schema":"schema.json@feedbeef","validation":false,"context":true,"referenceSelection":"paper","limit":null,"system":"sys","predictions":"gold","hallucination":true,"granularity":"sentence","contextControl":true,"missingPredictions":3}',
    text: 'tool:todeval|version:V|context:true|contextControl:true|data:sgd/test@0123456789ab|dataset:sgd|dtype:q8|family:deberta-v2|granularity:sentence|hallucination:true|limit:null|metric:sgsacc|missingPredictions:3|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|predictions:gold|referenceSelection:paper|revision:abc123|rules:r1|schema:schema.json@feedbeef|system:sys|validation:false',
  },
  'serve (defaults): per-turn results': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc-turns","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","data":"sgd/test@0123456789ab","schema":"schema.json@feedbeef","validation":true,"context":true,"referenceSelection":"entailed","contextControl":true}',
    text: 'tool:todeval|version:V|context:true|contextControl:true|data:sgd/test@0123456789ab|dataset:sgd|dtype:q8|family:deberta-v2|metric:sgsacc-turns|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|referenceSelection:entailed|revision:abc123|rules:r1|schema:schema.json@feedbeef|validation:true',
  },
  'rerank (defaults)': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc-rerank","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","context":true,"contextControl":true,"systems":"item-order"}',
    text: 'tool:todeval|version:V|context:true|contextControl:true|dataset:sgd|dtype:q8|family:deberta-v2|metric:sgsacc-rerank|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|revision:abc123|rules:r1|systems:item-order',
  },
  'rerank (every option)': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc-rerank","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","context":false,"systems":"b,a","hallucination":true,"rankBy":"omission-sentences"}',
    text: 'tool:todeval|version:V|context:false|dataset:sgd|dtype:q8|family:deberta-v2|hallucination:true|metric:sgsacc-rerank|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|rankBy:omission-sentences|revision:abc123|rules:r1|systems:b,a',
  },
  'rerank shard': {
    json: '{"tool":"todeval","version":"V","metric":"sgsacc-rerank","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","rules":"r1","dataset":"sgd","context":true,"contextControl":true,"systems":"item-order","shard":"2/4"}',
    text: 'tool:todeval|version:V|context:true|contextControl:true|dataset:sgd|dtype:q8|family:deberta-v2|metric:sgsacc-rerank|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|revision:abc123|rules:r1|shard:2/4|systems:item-order',
  },
  'nli': {
    json: '{"tool":"todeval","version":"V","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","maxLength":512,"device":"cpu"}',
    text: 'tool:todeval|version:V|device:cpu|dtype:q8|family:deberta-v2|maxLength:512|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|revision:abc123',
  },
  'evaluate': {
    json: '{"tool":"todeval","version":"V","metric":"mwz-evaluate","data":"multiwoz@0123456789ab","groundTruthBuilder":3,"bleu":"nrefs:1,case:mixed,eff:no,tok:13a,smooth:exp,version:2.4.0","chrf":"chrF2,nrefs:1,case:mixed,eff:yes,nc:6,nw:0,space:no,version:2.4.0","ter":"nrefs:1,case:lc,tok:tercom,norm:no,punct:yes,asian:no,version:2.4.0","dbFuzzyRatio":90,"stateSource":"predicted","domainSource":"goal","dataDir":"flag","dialogues":1000,"skipped":2}',
    text: 'tool:todeval|version:V|bleu:nrefs:1,case:mixed,eff:no,tok:13a,smooth:exp,version:2.4.0|chrf:chrF2,nrefs:1,case:mixed,eff:yes,nc:6,nw:0,space:no,version:2.4.0|data:multiwoz@0123456789ab|dataDir:flag|dbFuzzyRatio:90|dialogues:1000|domainSource:goal|groundTruthBuilder:3|metric:mwz-evaluate|skipped:2|stateSource:predicted|ter:nrefs:1,case:lc,tok:tercom,norm:no,punct:yes,asian:no,version:2.4.0',
  },
  'evaluate --sgsacc': {
    json: '{"tool":"todeval","version":"V","metric":"mwz-evaluate","data":"multiwoz@0123456789ab","groundTruthBuilder":3,"bleu":"nrefs:1,case:mixed,eff:no,tok:13a,smooth:exp,version:2.4.0","chrf":"chrF2,nrefs:1,case:mixed,eff:yes,nc:6,nw:0,space:no,version:2.4.0","ter":"nrefs:1,case:lc,tok:tercom,norm:no,punct:yes,asian:no,version:2.4.0","dbFuzzyRatio":90,"stateSource":"predicted","domainSource":"goal","dataDir":"flag","dialogues":1000,"skipped":2,"rules":"r1","schema":"schema.json@feedbeef","model":"cross-encoder/nli-deberta-v3-base","revision":"abc123","dtype":"q8","family":"deberta-v2","pairEncoding":"cls-a-sep-b-sep:01","referenceSelection":"entailed","contextControl":true,"granularity":"sentence","delexicalized":"skipped"}',
    text: 'tool:todeval|version:V|bleu:nrefs:1,case:mixed,eff:no,tok:13a,smooth:exp,version:2.4.0|chrf:chrF2,nrefs:1,case:mixed,eff:yes,nc:6,nw:0,space:no,version:2.4.0|contextControl:true|data:multiwoz@0123456789ab|dataDir:flag|dbFuzzyRatio:90|delexicalized:skipped|dialogues:1000|domainSource:goal|dtype:q8|family:deberta-v2|granularity:sentence|groundTruthBuilder:3|metric:mwz-evaluate|model:cross-encoder/nli-deberta-v3-base|pairEncoding:cls-a-sep-b-sep:01|referenceSelection:entailed|revision:abc123|rules:r1|schema:schema.json@feedbeef|skipped:2|stateSource:predicted|ter:nrefs:1,case:lc,tok:tercom,norm:no,punct:yes,asian:no,version:2.4.0',
  },
  'evaluate --items (predictions named)': {
    json: '{"tool":"todeval","version":"V","metric":"mwz-evaluate","data":"multiwoz@0123456789ab","groundTruthBuilder":3,"bleu":"nrefs:1,case:mixed,eff:no,tok:13a,smooth:exp,version:2.4.0","chrf":"chrF2,nrefs:1,case:mixed,eff:yes,nc:6,nw:0,space:no,version:2.4.0","ter":"nrefs:1,case:lc,tok:tercom,norm:no,punct:yes,asian:no,version:2.4.0","dbFuzzyRatio":90,"stateSource":"predicted","domainSource":"goal","dataDir":"flag","dialogues":1000,"skipped":2,"predictions":"multiwoz/predictions/augpt.json@0123456789ab"}',
    text: 'tool:todeval|version:V|bleu:nrefs:1,case:mixed,eff:no,tok:13a,smooth:exp,version:2.4.0|chrf:chrF2,nrefs:1,case:mixed,eff:yes,nc:6,nw:0,space:no,version:2.4.0|data:multiwoz@0123456789ab|dataDir:flag|dbFuzzyRatio:90|dialogues:1000|domainSource:goal|groundTruthBuilder:3|metric:mwz-evaluate|predictions:multiwoz/predictions/augpt.json@0123456789ab|skipped:2|stateSource:predicted|ter:nrefs:1,case:lc,tok:tercom,norm:no,punct:yes,asian:no,version:2.4.0',
  },
  'gcdf1': {
    json: '{"tool":"todeval","version":"V","metric":"gcdf1","config":"ea946c6eb2f6","configFile":"published-defaults","canonicalMap":"none","data":"gcdf1/test@0123456789ab","dialogues":10,"skipped":0,"limit":10,"shard":"1/2"}',
    text: 'tool:todeval|version:V|canonicalMap:none|config:ea946c6eb2f6|configFile:published-defaults|data:gcdf1/test@0123456789ab|dialogues:10|limit:10|metric:gcdf1|shard:1/2|skipped:0',
  },
  'ser': {
    json: '{"tool":"todeval","version":"V","metric":"ser","dataset":"sgd","data":"sgd/test@0123456789ab","schema":"sgd/test/schema.json@feedbeef","predictions":"ground-truth","match":"substring-ci","robust":true,"canonicalMap":"none","limit":5,"skipped":0,"missingPredictions":2}',
    text: 'tool:todeval|version:V|canonicalMap:none|data:sgd/test@0123456789ab|dataset:sgd|limit:5|match:substring-ci|metric:ser|missingPredictions:2|predictions:ground-truth|robust:true|schema:sgd/test/schema.json@feedbeef|skipped:0',
  },
  'refs': {
    json: '{"tool":"todeval","version":"V","rules":"r1","dataset":"sgd","data":"sgd/test@0123456789ab","limit":20}',
    text: 'tool:todeval|version:V|data:sgd/test@0123456789ab|dataset:sgd|limit:20|rules:r1',
  },
};

describe('every product signs a fixed configuration exactly as pinned', () => {
  for (const [name, build] of Object.entries(PRODUCTS)) {
    it(name, () => {
      expect(pin(build())).toEqual(PINNED[name]);
    });
  }
});

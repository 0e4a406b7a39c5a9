import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeModelDir } from '../src/nli/model-store.js';
import { isTwoLabel, labelIndexFromConfig, probsFromLogits, TWO_LABEL_RULE } from '../src/nli/labels.js';
import { pairEncodingOf, ROBERTA_PAIR_TEMPLATE, signatureEncoding } from '../src/nli/pair-encoding.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { InputError } from '../src/util/errors.js';
import {
  bartTokenizerJson,
  bertTokenizerJson,
  byteLevelTemplateTokenizerJson,
  debertaV3TokenizerJson,
  FAMILY_CONFIGS,
  robertaBpeTokenizerJson,
  templateBertTokenizerJson,
} from './helpers/nli-family-tokenizers.js';
import { suiteTempDir } from './helpers/temp.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';

const PAIRS = [
  ...SAMPLE_PAIRS,
  { premise: 'I want to book a table at Il Fornaio in San Jose. What about 7 pm on Monday?', hypothesis: 'The city is San Jose.' },
  { premise: 'There are no free rooms.', hypothesis: 'The hotel is cheap.' },
];

/** Each family's tokenizer.json (built with its post-processor), its config, and what the library gives a pair. */
const FAMILIES = [
  { name: 'BERT (BertProcessing)', json: bertTokenizerJson, config: FAMILY_CONFIGS.bert, template: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' },
  { name: 'MiniLM/ELECTRA (TemplateProcessing)', json: templateBertTokenizerJson, config: FAMILY_CONFIGS.electra, template: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' },
  { name: 'DeBERTa-v3 (Unigram, TemplateProcessing)', json: debertaV3TokenizerJson, config: FAMILY_CONFIGS['deberta-v2'], template: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' },
  { name: 'BART (RobertaProcessing)', json: bartTokenizerJson, config: FAMILY_CONFIGS.bart, template: ROBERTA_PAIR_TEMPLATE },
  { name: 'byte-level Sequence [ByteLevel, TemplateProcessing]', json: byteLevelTemplateTokenizerJson, config: FAMILY_CONFIGS.bart, template: ROBERTA_PAIR_TEMPLATE },
];

describe('pair encoding from the tokenizer post-processor, per family', () => {
  for (const f of FAMILIES) {
    describe(f.name, () => {
      const tok = new PairTokenizer(f.json(), {}, f.config);

      it('reads the pair template with its segment ids', () => {
        expect(tok.pairEncoding.template).toBe(f.template);
      });

      it("gives the library's pair ids and segment ids on every sample pair", () => {
        for (const p of PAIRS) {
          const ours = tok.encodePair(p.premise, p.hypothesis);
          const lib = tok.encoder.library.encode(p.premise, { text_pair: p.hypothesis, return_token_type_ids: true });
          expect(ours.ids).toEqual(lib.ids);
          if (tok.pairEncoding.processor === 'RobertaProcessing') {
            // The Rust library (what transformers runs) sets every RoBERTa/BART segment id to 0
            // (its RobertaProcessing: "every encoding is type_id=0"); the JavaScript port gives the
            // second text 1s, which RoBERTa's single segment embedding could not even look up.
            expect(ours.typeIds.every((t) => t === 0)).toBe(true);
          } else {
            expect(ours.typeIds).toEqual(lib.token_type_ids);
          }
        }
      });

      it('cuts the premise first, leaving room for exactly the template special tokens', () => {
        const small = new PairTokenizer(f.json(), {}, f.config, { maxLength: 24 });
        const premise = 'I want to book a table at Il Fornaio in San Jose. What about 7 pm on Monday? There are no free rooms.';
        const hypothesis = 'The city is San Jose.';
        const enc = small.encodePair(premise, hypothesis);
        expect(enc.ids).toHaveLength(24);
        expect(enc.premiseTruncated).toBeGreaterThan(0);
        expect(enc.hypothesisTruncated).toBe(0);
        const h = small.textIds(hypothesis);
        const e = small.pairEncoding;
        // The hypothesis is whole, just before the closing special tokens, with its segment id.
        const at = 24 - e.suffix.length - h.length;
        expect(enc.ids.slice(at, at + h.length)).toEqual(h);
        expect(enc.typeIds.slice(at, at + h.length).every((t) => t === e.hypothesisType)).toBe(true);
        expect(enc.ids.slice(0, e.prefix.length)).toEqual(Array.from(e.prefix));
      });
    });
  }

  it('feeds BERT-style models segment 1 on the hypothesis, where RoBERTa has none and another layout', () => {
    const bert = new PairTokenizer(bertTokenizerJson(), {}, FAMILY_CONFIGS.bert);
    const roberta = new PairTokenizer(robertaBpeTokenizerJson(), {}, { model_type: 'roberta', max_position_embeddings: 514, pad_token_id: 1 });
    const enc = bert.encodePair('I want to book a table.', 'The city is San Jose.');
    expect(enc.typeIds.filter((t) => t === 1)).toHaveLength(bert.textIds('The city is San Jose.').length + 1);
    expect(bert.pairEncoding.segmentsAllZero).toBe(false);
    expect(bert.pairEncoding.specials).toBe(3);
    expect(roberta.pairEncoding.segmentsAllZero).toBe(true);
    expect(roberta.pairEncoding.specials).toBe(4);
    expect(roberta.maxLength).toBe(512);
  });

  it('names the pair encoding in signatures unless it is RoBERTa', () => {
    expect(signatureEncoding(ROBERTA_PAIR_TEMPLATE)).toBeUndefined();
    expect(signatureEncoding('[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1')).toBe('[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1');
  });

  it('takes no special tokens and segment 1 for the hypothesis where the post-processor adds none', () => {
    const none = pairEncodingOf({ post_processor: null }, () => undefined);
    expect(none.template).toBe('$A:0 $B:1');
    const byteLevel = pairEncodingOf({ post_processor: { type: 'ByteLevel' } }, () => undefined);
    expect(byteLevel.specials).toBe(0);
  });

  it('refuses post-processors it cannot read, in one line naming them', () => {
    expect(() => pairEncodingOf({ post_processor: { type: 'Fancy' } }, () => undefined, 'tokenizer.json')).toThrow(InputError);
    expect(() => pairEncodingOf({ post_processor: { type: 'Fancy' } }, () => undefined)).toThrow(/Fancy/);
    const twice = { type: 'Sequence', processors: [{ type: 'BertProcessing', sep: ['[SEP]', 2], cls: ['[CLS]', 1] }, { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0] }] };
    expect(() => pairEncodingOf({ post_processor: twice }, () => undefined)).toThrow(/2 members that add tokens/);
    const backwards = { type: 'TemplateProcessing', pair: [{ Sequence: { id: 'B', type_id: 0 } }, { Sequence: { id: 'A', type_id: 1 } }], special_tokens: {} };
    expect(() => pairEncodingOf({ post_processor: backwards }, () => undefined)).toThrow(/\$A once and then \$B once/);
    const unknownToken = { type: 'TemplateProcessing', pair: [{ SpecialToken: { id: '[X]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }], special_tokens: {} };
    expect(() => pairEncodingOf({ post_processor: unknownToken }, () => undefined)).toThrow(/\[X\]/);
  });

  it('takes maxLength from positions the family reserves: RoBERTa 514 -> 512, BERT 512 -> 512, capped by the tokenizer', () => {
    const bert = new PairTokenizer(bertTokenizerJson(), { model_max_length: 128 }, FAMILY_CONFIGS.bert);
    expect(bert.maxLength).toBe(128);
    expect(new PairTokenizer(bertTokenizerJson(), {}, FAMILY_CONFIGS.bert).maxLength).toBe(512);
    expect(new PairTokenizer(bertTokenizerJson(), {}, { ...FAMILY_CONFIGS.bert, max_position_embeddings: 300 }).maxLength).toBe(300);
  });

  it('signs a truncation only where it is shorter than the model\'s own limit (nli.maxLength), so the default signs nothing', () => {
    const shortened = new PairTokenizer(bertTokenizerJson(), {}, FAMILY_CONFIGS.bert, { maxLength: 128 });
    expect([shortened.maxLength, shortened.naturalMaxLength, shortened.signedMaxLength]).toEqual([128, 512, 128]);
    // The model's own limit, asked for or not, or a longer one (cut to it): nothing signed.
    for (const maxLength of [undefined, 512, 4096]) expect(new PairTokenizer(bertTokenizerJson(), {}, FAMILY_CONFIGS.bert, { maxLength }).signedMaxLength).toBeUndefined();
    // A tokenizer whose own model_max_length is shorter than the positions: that is its natural limit.
    const ownLimit = new PairTokenizer(bertTokenizerJson(), { model_max_length: 128 }, FAMILY_CONFIGS.bert);
    expect([ownLimit.maxLength, ownLimit.signedMaxLength]).toEqual([128, undefined]);
  });
});

describe('labels from id2label', () => {
  it('reads three MNLI labels in any order and case', () => {
    expect(labelIndexFromConfig({ id2label: { 0: 'Entailment', 1: 'Neutral', 2: 'Contradiction' } })).toEqual({ entailment: 0, neutral: 1, contradiction: 2 });
    expect(labelIndexFromConfig({ id2label: { 0: 'contradiction', 1: 'entailment', 2: 'neutral' } })).toEqual({ entailment: 1, neutral: 2, contradiction: 0 });
  });

  it(`maps a two-label model by the documented rule (${TWO_LABEL_RULE})`, () => {
    const index = labelIndexFromConfig({ id2label: { 0: 'not_entailment', 1: 'entailment' } });
    expect(isTwoLabel(index)).toBe(true);
    const logits = Float32Array.from([0.5, 2]);
    const p = probsFromLogits(logits, 0, 2, index);
    const e = Math.exp(2) / (Math.exp(2) + Math.exp(0.5));
    expect(p.entailment).toBeCloseTo(e, 12);
    expect(p.neutral).toBeCloseTo(1 - e, 12);
    expect(p.contradiction).toBe(0);
    expect(labelIndexFromConfig({ id2label: { 0: 'ENTAILMENT', 1: 'NON_ENTAILMENT' } })).toEqual({ entailment: 0, neutral: 1, contradiction: -1 });
  });

  it('refuses labels that are neither, in one line naming them', () => {
    expect(() => labelIndexFromConfig({ id2label: { 0: 'LABEL_0', 1: 'LABEL_1' } })).toThrow(/labels: LABEL_0, LABEL_1/);
    expect(() => labelIndexFromConfig({ id2label: { 0: 'entailment', 1: 'neutral' } })).toThrow(InputError);
    expect(() => labelIndexFromConfig({ id2label: { 0: 'entailment', 1: 'not_entailment', 2: 'neutral' } })).toThrow(/not an MNLI model/);
  });
});

describe('a model directory described as doctor and models list show it', () => {
  const dir = suiteTempDir('nli-describe');

  it('names the family from config.json and the pair template from tokenizer.json', () => {
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify(FAMILY_CONFIGS['deberta-v2']));
    writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(debertaV3TokenizerJson()));
    expect(describeModelDir(dir)).toEqual({ family: 'deberta-v2', pairEncoding: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' });
    writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify({ post_processor: { type: 'Fancy' } }));
    expect(describeModelDir(dir).pairEncoding).toMatch(/^unreadable \(tokenizer post-processor Fancy/);
  });
});

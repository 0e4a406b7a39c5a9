import path from 'node:path';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { TOKENIZER_DIR } from './helpers/shared.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';

describe('RoBERTa pair tokenizer (real tokenizer.json)', () => {
  let tok: PairTokenizer;
  let config: Record<string, unknown>;
  beforeAll(() => {
    config = JSON.parse(readFileSync(path.join(TOKENIZER_DIR, 'config.json'), 'utf8'));
    tok = PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), path.join(TOKENIZER_DIR, 'tokenizer_config.json'), config);
  });

  it('encodes the known pair as <s> premise </s></s> hypothesis </s>', () => {
    const { ids } = tok.encodePair('I want to book a hair cut. What about Queens?', 'The name of the hair stylist is Queens.');
    // <s>=0, "I"=100, " want"=236, " to"=7, " book"=1040 (checked by hand in vocab.json)
    expect(ids.slice(0, 5)).toEqual([0, 100, 236, 7, 1040]);
    expect(ids[ids.length - 1]).toBe(2);
    const sep = ids.indexOf(2);
    expect(ids[sep + 1]).toBe(2);
    // The hypothesis starts without a leading-space token: "The" is 133, not " The" (20).
    expect(ids[sep + 2]).toBe(133);
    expect(ids.filter((t) => t === 2)).toHaveLength(3);
  });

  it('matches the library pair encoding on untruncated pairs', () => {
    for (const p of SAMPLE_PAIRS) {
      expect(tok.encodePair(p.premise, p.hypothesis).ids).toEqual(tok.referencePairIds(p.premise, p.hypothesis));
    }
  });

  it('takes the model maximum (512) from config and tokenizer_config', () => {
    expect(tok.maxLength).toBe(512);
    expect(tok.padId).toBe(1);
  });

  it('truncates a long premise first and keeps the hypothesis whole', () => {
    const premise = Array.from({ length: 700 }, (_, i) => `word${i % 50}`).join(' ');
    const hypothesis = 'The name of the restaurant is Il Fornaio.';
    const enc = tok.encodePair(premise, hypothesis);
    expect(enc.ids).toHaveLength(512);
    expect(enc.premiseTruncated).toBeGreaterThan(0);
    expect(enc.hypothesisTruncated).toBe(0);
    const hypIds = tok.textIds(hypothesis);
    expect(enc.ids.slice(512 - 1 - hypIds.length, 511)).toEqual(hypIds);
    // The kept premise is a prefix of the full premise encoding.
    const premIds = tok.textIds(premise);
    const sep = enc.ids.indexOf(2);
    expect(enc.ids.slice(1, sep)).toEqual(premIds.slice(0, sep - 1));
  });

  it('cuts the hypothesis only when the premise alone cannot make room', () => {
    const small = PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), undefined, config, { maxLength: 16 });
    const enc = small.encodePair('Hello there, how are you today?', 'The name of the hair stylist is Queens and the city is New York.');
    expect(enc.ids).toHaveLength(16);
    expect(enc.ids.slice(0, 4)).toEqual([0, 2, 2, 133]); // empty premise, then the hypothesis
    expect(enc.hypothesisTruncated).toBeGreaterThan(0);
  });
});

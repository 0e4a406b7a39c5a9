import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSgsaccData } from '../src/metrics/sgsacc/dataset.js';
import { joinReferences, withUserTurn } from '../src/metrics/sgsacc/hallucination.js';
import { contextPremise } from '../src/metrics/sgsacc/premise.js';
import { LONG_PIECE_CHARS, SegmentEncoder } from '../src/nli/segment-encoder.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { turnDue, yieldTurn as nextTurn } from './helpers/yield.js';
import { contentKey, rememberedIdLists, rememberIdLists } from './helpers/reference-memo.js';
import { DATA_DIR, hasData, REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';

// The tokenizer encodes each side of a pair on its own, sentence by sentence and word by word from
// memos, and joins the sides with RoBERTa's pair template. These tests hold that to the library's
// own encodings: every text the SGD test set can put into a pair, the template, and the truncation.

/** What decides the library's encodings besides its inputs: its package (version and code) and the runtime's Unicode tables. */
const LIBRARY_DIR = path.join(REPO_ROOT, 'node_modules', '@huggingface', 'tokenizers');
const libraryVersion = () => (JSON.parse(readFileSync(path.join(LIBRARY_DIR, 'package.json'), 'utf8')) as { version: string }).version;
function libraryFingerprint(): string {
  const code = readdirSync(path.join(LIBRARY_DIR, 'dist'))
    .sort()
    .map((f) => contentKey([f, readFileSync(path.join(LIBRARY_DIR, 'dist', f))]));
  return JSON.stringify({ package: readFileSync(path.join(LIBRARY_DIR, 'package.json'), 'utf8'), code, node: process.versions.node, v8: process.versions.v8, icu: process.versions.icu, unicode: process.versions.unicode });
}

const readJson = (file: string) => JSON.parse(readFileSync(path.join(TOKENIZER_DIR, file), 'utf8')) as object;
const libraryIds = (enc: SegmentEncoder, text: string) => enc.library.encode(text, { add_special_tokens: false }).ids;

describe('segment-wise encoding against the library (edge cases)', () => {
  let enc: SegmentEncoder;
  beforeAll(() => {
    enc = new SegmentEncoder(readJson('tokenizer.json'), readJson('tokenizer_config.json'));
  });

  it('memoizes words only for the tokenizer it is proven for (ByteLevel, regex, no prefix space, no normalizer)', () => {
    expect(enc.memoizesWords).toBe(true);
    // RoBERTa's words go to our BPE (no library tables built for them); every comparison below holds it to the library.
    expect(enc.ownBpe).toBe(true);
    const json = readJson('tokenizer.json') as Record<string, unknown>;
    const prefixed = { ...json, pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true } };
    expect(new SegmentEncoder(prefixed, {}).memoizesWords).toBe(false);
    expect(new SegmentEncoder({ ...json, normalizer: { type: 'Lowercase' } }, {}).memoizesWords).toBe(false);
    expect(new SegmentEncoder(json, { remove_space: true }).memoizesWords).toBe(false);
  });

  it('gives the library ids on texts that stress the cuts: spaces, line breaks, contractions, sentence ends, added tokens, non-Latin script', () => {
    const texts = [
      '',
      ' ',
      '   ',
      'Hello',
      ' leading space',
      'trailing space ',
      'two  spaces  between',
      'tab\tand\nnewline\n\nthen text',
      'Ends.  Two spaces after the period.',
      'Ends. One space. Three sentences! Or four? Yes.',
      'No space after.Period or!bang?mark',
      "It's the user's car, isn't it? They'll go. We'd've said I'm ok.",
      "'s at the start. 's after a sentence end. 'S capital",
      'Price: $45.50 at 7:30 pm on 2019-03-01, room #12.',
      '... ?! ... .  . .',
      'Café Müller, São Paulo, Zürich. Ünïcödé!',
      '東京の ホテル. 서울 호텔. 😀 emoji. 👍🏽 skin tone.',
      'A text with <s> and </s> and <mask> in it.',
      'The <mask>. lstrip takes the space before it.',
      'Two\u00a0no-break\u00a0spaces. And\u2009a thin one.',
      'End with a period.',
      'a.b.c. d.e. f',
      'Sentence one.\nSentence two. ',
      'aaaaaaaaaaaaa aaaa aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa. lllllll ssssssss eeeeeeeeeeee',
      'A lone \uD800 surrogate and \uDC00 its mate, \uD835\uDC00 whole.',
      'Quotes "and" back\\slashes \\" mixed.',
    ];
    for (const t of texts) expect([t, Array.from(enc.encode(t))]).toEqual([t, libraryIds(enc, t)]);
  });

  it('cuts a pre-token longer than LONG_PIECE_CHARS never between the halves of a surrogate pair', () => {
    // A space and 64 emoji: one pre-token of 129 UTF-16 units, whose 128th unit is the high half of
    // the last emoji. Cut there, each half became U+FFFD (bytes EF BF BD) instead of the emoji's F0 9F 98 80.
    const run = ` ${'😀'.repeat(64)}`;
    expect(run).toHaveLength(LONG_PIECE_CHARS + 1);
    const text = `Nice${run}`;
    const ids = Array.from(enc.encode(text));
    expect(enc.library.decode(ids, { clean_up_tokenization_spaces: false })).toBe(text);
    // RoBERTa has no merge that joins the last byte of this emoji to the first of the next, so a cut
    // between two of them changes no token: the library's ids for the whole text.
    expect(ids).toEqual(libraryIds(enc, text));
  });
});

describe.skipIf(!hasData('sgd', 'test'))(
  'segment-wise encoding over every pair the SGD test set can make',
  () => {
    let tok: PairTokenizer;
    /** Each side's ids from the library, whole text at a time. */
    const reference = new Map<string, number[]>();
    /** Every (premise, hypothesis) a run can ask for: plain and context premises, both directions. */
    const pairs: [string, string][] = [];
    // Hypotheses seen per premise: no joined key string (a copy of both texts) for each of the
    // half a million pairs.
    const seen = new Map<string, Set<string>>();
    const addPair = (p: string, h: string) => {
      let hs = seen.get(p);
      if (!hs) seen.set(p, (hs = new Set()));
      if (hs.has(h)) return;
      hs.add(h);
      pairs.push([p, h]);
    };

    beforeAll(async () => {
      tok = PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), path.join(TOKENIZER_DIR, 'tokenizer_config.json'));
      await nextTurn();
      const data = loadSgsaccData({ dataset: 'sgd', dataDir: DATA_DIR });
      await nextTurn();
      const due = turnDue();
      for (const t of data.expand(data.loaded.turns)) {
        if (due()) await nextTurn();
        const hallucination: string[] = [];
        for (const a of t.actions) {
          const premises = [t.utterance, contextPremise(t.previousUserUtterance, a.slotDescription, t.utterance)];
          for (const premise of premises) for (const h of [...a.candidates, ...a.negatives]) addPair(premise, h);
          if (a.candidates.length > 0) hallucination.push(a.candidates[0]);
        }
        // The other direction: the references joined (here: each action's first candidate) entail the utterance.
        const joined = joinReferences(hallucination);
        for (const premise of [joined, withUserTurn(t.previousUserUtterance, joined)]) if (premise) addPair(premise, t.utterance);
      }
      seen.clear();
      const texts = new Set<string>();
      for (const [p, h] of pairs) texts.add(p).add(h);
      // The library's encodings are a pure function of its code, the tokenizer files, the runtime's
      // regular expressions (Unicode tables) and the texts: kept by that content
      // (test/helpers/reference-memo.ts), they are computed again only when one of them changes.
      const key = contentKey([libraryFingerprint(), readFileSync(path.join(TOKENIZER_DIR, 'tokenizer.json')), readFileSync(path.join(TOKENIZER_DIR, 'tokenizer_config.json')), ...texts]);
      const kept = rememberedIdLists('tokenizers-library-ids', key);
      const lib = kept ? undefined : new SegmentEncoder(readJson('tokenizer.json'), readJson('tokenizer_config.json'));
      let k = 0;
      for (const text of texts) {
        reference.set(text, kept ? kept[k++] : libraryIds(lib!, text));
        // Seconds of library work: let the test runner's own messages through now and then.
        if (due()) await nextTurn();
      }
      if (!kept) rememberIdLists('tokenizers-library-ids', key, [...reference.values()]);
      console.log(`[tokenizers] ${reference.size.toLocaleString('en-US')} texts encoded by @huggingface/tokenizers ${libraryVersion()} (${kept ? 'remembered' : 'live'})`);
    }, 600_000);

    it('encodes every side of every pair exactly as the library encodes the whole text', async () => {
      expect(reference.size).toBeGreaterThan(100_000);
      let checked = 0;
      const due = turnDue();
      for (const [text, ids] of reference) {
        if (due()) await nextTurn();
        const mine = tok.ids(text);
        if (mine.length !== ids.length || mine.some((x, i) => x !== ids[i])) expect([text, Array.from(mine)]).toEqual([text, ids]);
        checked++;
      }
      expect(checked).toBe(reference.size);
    });

    it("joins the sides as the library's pair encoding does (<s> premise </s></s> hypothesis </s>), on pairs spread over the set", async () => {
      const step = Math.max(1, Math.floor(pairs.length / 2000));
      const due = turnDue();
      for (let i = 0; i < pairs.length; i += step) {
        if (due()) await nextTurn();
        const [p, h] = pairs[i];
        expect(tok.encodePair(p, h).ids).toEqual(tok.referencePairIds(p, h));
      }
    });

    it('cuts every pair to a small maximum premise first, the hypothesis only when the premise alone cannot make room', async () => {
      // 24 tokens: most pairs are cut, some down to an empty premise and a cut hypothesis.
      const small = PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), undefined, {}, { maxLength: 24 });
      let cutPremise = 0;
      let cutHypothesis = 0;
      let firstWrong: unknown;
      const due = turnDue();
      for (const [p, h] of pairs) {
        if (due()) await nextTurn();
        const P = reference.get(p)!;
        const H = reference.get(h)!;
        const room = 24 - 4;
        const keepH = Math.min(H.length, room);
        const keepP = Math.min(P.length, room - keepH);
        const enc = small.encodePair(p, h);
        // <s> P[0, keepP) </s></s> H[0, keepH) </s>, compared in place (the expected row is built
        // only for a pair that differs, for the message).
        const ids = enc.ids;
        let sameIds = ids.length === keepP + keepH + 4 && ids[0] === 0 && ids[keepP + 1] === 2 && ids[keepP + 2] === 2 && ids[ids.length - 1] === 2;
        for (let k = 0; sameIds && k < keepP; k++) sameIds = ids[1 + k] === P[k];
        for (let k = 0; sameIds && k < keepH; k++) sameIds = ids[keepP + 3 + k] === H[k];
        const same =
          sameIds &&
          // Encoding stops once a side has maxLength ids (nothing after them reaches the model), so
          // the counts say whether a side was cut, not how much of a long one was dropped.
          enc.premiseTruncated > 0 === P.length - keepP > 0 &&
          enc.hypothesisTruncated > 0 === H.length - keepH > 0;
        if (!same) firstWrong ??= { p, h, got: enc, expected: [0, ...P.slice(0, keepP), 2, 2, ...H.slice(0, keepH), 2] };
        if (keepP < P.length) cutPremise++;
        if (keepH < H.length) cutHypothesis++;
      }
      expect(firstWrong).toBeUndefined();
      expect(cutPremise).toBeGreaterThan(pairs.length / 4);
      expect(cutHypothesis).toBeGreaterThan(0);
    });
  },
);

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// evaluate --sgsacc --granularity sentence: the sentence-level rate of the lexicalized turns of an
// mwzeval input, as score --granularity sentence gives it for a dataset, and its shards merging
// back to the single run. The lexical stand-in's figures are NOT SGSAcc.
type Json = Record<string, unknown>;
interface Sentences {
  counts: Record<string, number>;
  unvalidated: { all: number | null };
  confidence: { overall: { metrics: Record<string, { units: number }> } };
}
interface Report {
  signature: Json;
  sgsacc: Json & { sentences?: Sentences; counts: Record<string, number> };
}

// An invented sentence no fact of any MultiWOZ turn carries: the stand-in finds no support for it.
const INVENTED = 'The helicopter pad on the roof is open to guests until midnight.';

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('evaluate --sgsacc --granularity sentence (lexical stand-in)', () => {
  const dir = suiteTempDir('evsent');
  const f = (name: string) => path.join(dir, name);
  let model = '';
  let inserted = 0;
  const args = (input: string) => ['evaluate', '-i', f(input), '--sgsacc', '--data-dir', DATA_DIR, '--model', model, '--device', 'cpu', '-b', '--progress', 'none'];
  const read = (name: string) => JSON.parse(readFileSync(f(name), 'utf8')) as Report;
  let sentenceText = '';

  beforeAll(async () => {
    model = getLexicalStandinDir();
    const convlab = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<string, { log: { text: string }[] }>;
    // Four dialogues, gold texts as lexicalized responses; the same with the invented sentence
    // added to every third turn of the first two (those ending in . ! or ?).
    const ids = Object.keys(convlab).slice(0, 4);
    const gold = Object.fromEntries(ids.map((id) => [id.replace(/\.json$/, '').toLowerCase(), convlab[id].log.filter((_, i) => i % 2 === 1).map((t) => ({ response: t.text }))]));
    const altered = Object.fromEntries(
      Object.entries(gold).map(([id, turns], d) => [
        id,
        turns.map((t, k) => {
          // After a reply that ends its last sentence, so that the invented one is a sentence of its own.
          if (d > 1 || k % 3 !== 0 || !/[.!?]$/.test(t.response.trim())) return t;
          inserted++;
          return { response: `${t.response.trim()} ${INVENTED}` };
        }),
      ]),
    );
    writeFileSync(f('gold.json'), JSON.stringify(gold));
    writeFileSync(f('altered.json'), JSON.stringify(altered));
    await runInProcess([...args('gold.json'), '-o', f('turn.json')]);
    await runInProcess([...args('gold.json'), '--granularity', 'sentence', '-o', f('sentence.json')]);
    sentenceText = await runInProcess([...args('altered.json'), '--granularity', 'sentence', '-o', f('altered-sentence.json')]);
  }, 240_000);

  it('adds the sentence section and its signature key, and leaves the SGSAcc section as it was', () => {
    const turn = read('turn.json');
    const sentence = read('sentence.json');
    expect(turn.sgsacc).not.toHaveProperty('sentences');
    expect(turn.signature).not.toHaveProperty('granularity');
    expect(sentence.signature.granularity).toBe('sentence');
    const { granularity: _g, ...sig } = sentence.signature;
    expect(sig).toEqual(turn.signature);
    const { sentences, ...sgsacc } = sentence.sgsacc;
    expect(sgsacc).toEqual(turn.sgsacc);
    const c = sentences!.counts;
    expect(c.turns).toBe(sentence.sgsacc.counts.lexicalizedTurns);
    expect(c.sentences).toBeGreaterThanOrEqual(c.turns);
    expect(c.checked + c.courtesy + c.unchecked).toBe(c.sentences);
    expect(c.supported + c.unsupported + c.contradicted).toBe(c.checked);
    expect(sentences!.confidence.overall.metrics['hallucination-sentences-all'].units).toBe(4);
  });

  it('each invented sentence is one more sentence, checked and not supported', () => {
    expect(inserted).toBeGreaterThan(3);
    const before = read('sentence.json').sgsacc.sentences!.counts;
    const after = read('altered-sentence.json').sgsacc.sentences!.counts;
    expect(after.sentences - before.sentences).toBe(inserted);
    // Only an unscorable turn leaves its sentences unchecked; in a content-free turn (a goodbye, say)
    // the invented sentence is checked like any other (docs/sgsacc.md), and none is supported.
    const checked = after.checked - before.checked;
    expect(checked + after.unchecked - before.unchecked).toBe(inserted);
    expect(checked).toBeGreaterThan(inserted / 2);
    expect(after.unsupported + after.contradicted - (before.unsupported + before.contradicted)).toBe(checked);
    expect(after.supported).toBe(before.supported);
    expect(sentenceText).toContain('====== SENTENCES NO FACT SUPPORTS');
    expect(sentenceText).toMatch(/^unsupp_unval\s+\d/m);
  });

  it('--shard 1/2 + 2/2 merged give the single run byte for byte', async () => {
    const shards: string[] = [];
    for (const k of [1, 2]) {
      await runInProcess([...args('altered.json'), '--granularity', 'sentence', '--shard', `${k}/2`, '-o', f(`part-${k}.json`)]);
      shards.push(f(`part-${k}.json`));
    }
    const parts = shards.map((s) => (JSON.parse(readFileSync(s, 'utf8')) as { shard: { turns: { lexicalized: number } } }).shard.turns.lexicalized);
    expect(parts.every((n) => n > 0)).toBe(true);
    await runInProcess(['merge', ...shards.reverse(), '-o', f('merged.json')]);
    expect(readFileSync(f('merged.json'), 'utf8')).toBe(readFileSync(f('altered-sentence.json'), 'utf8'));
  }, 240_000);

  it('--granularity without --sgsacc is one line and exit 2', async () => {
    const res = await runCli(['evaluate', '-i', f('gold.json'), '--data-dir', DATA_DIR, '--granularity', 'sentence']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/--granularity sets how --sgsacc checks the turns: give --sgsacc/);
  });
});

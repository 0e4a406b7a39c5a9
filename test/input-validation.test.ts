import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDialogues } from '../src/metrics/gcdf1/evaluate.js';
import { loadPredictions } from '../src/metrics/predictions.js';
import { capPairText, MAX_PAIR_TEXT_CHARS } from '../src/nli/limits.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { InputError } from '../src/util/errors.js';
import { runCli } from './helpers/cli.js';
import { conversation, system, user } from './gcdf1-conversations.js';
import { hasShared, REPO_ROOT, SHARED_TOKENIZER_DIR } from './helpers/shared.js';

const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');
const tmp = (): string => mkdtempSync(path.join(tmpdir(), 'todeval-inputs-'));

describe('wrong types in dataset inputs are one-line errors, not silent drops', () => {
  it('an SGD action whose "values" is a string (was: no candidates, out of the denominator, exit 0)', async () => {
    const dialogues = JSON.parse(readFileSync(path.join(MINI, 'dialogues.json'), 'utf8')) as {
      dialogue_id: string;
      turns: { speaker: string; frames: { service: string; actions: { act: string; values?: unknown }[] }[] }[];
    }[];
    const d = dialogues[0];
    const ti = d.turns.findIndex((t) => t.speaker === 'SYSTEM' && t.frames.some((f) => f.actions.some((a) => Array.isArray(a.values) && a.values.length > 0)));
    const frame = d.turns[ti].frames.find((f) => f.actions.some((a) => Array.isArray(a.values) && a.values.length > 0))!;
    const k = frame.actions.findIndex((a) => Array.isArray(a.values) && a.values.length > 0);
    frame.actions[k].values = 'lemon';
    const file = path.join(tmp(), 'dialogues.json');
    writeFileSync(file, JSON.stringify(dialogues));
    const r = await runCli(['refs', '--dialogues', file, '--schema', path.join(MINI, 'schema.json'), '--summary']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `todeval: ${file}: ${d.dialogue_id}/${ti}: ${frame.service} action ${k} (${frame.actions[k].act}): values must be array (schemas/sgd-action.schema.json)\n`,
    );
    const skipped = await runCli(['refs', '--dialogues', file, '--schema', path.join(MINI, 'schema.json'), '--summary', '--skip-invalid']);
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toContain(`todeval: skipped invalid input: ${file}: ${d.dialogue_id}/${ti}: `);
  });

  it('gcdf1: a dialogue id seen twice is refused (was: one of them silently dropped); --skip-invalid lists the later copy', () => {
    const dir = tmp();
    const goal = { hotel: { info: { area: 'north' }, reqt: { phone: '?' } } };
    const turns = [user([['Hotel-Inform', 'area', 'north'], ['Hotel-Request', 'phone']]), system([['Hotel-Inform', 'phone', '01223']])];
    writeFileSync(path.join(dir, 'dialogues_001.json'), JSON.stringify([conversation(goal, turns, 'A.json'), conversation(goal, turns, 'B.json')]));
    writeFileSync(path.join(dir, 'dialogues_002.json'), JSON.stringify([conversation(goal, turns, 'A.json')]));
    let err: unknown;
    try {
      loadDialogues(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).oneLine()).toBe(`${path.join(dir, 'dialogues_002.json')}: A.json: duplicate dialogue id (first in ${path.join(dir, 'dialogues_001.json')})`);
    const loaded = loadDialogues(dir, true);
    expect(loaded.dialogues.map((x) => x.dialogue_id)).toEqual(['A.json', 'B.json']);
    expect(loaded.invalid).toHaveLength(1);
  });
});

describe('oversize utterances', () => {
  const huge = `${'This is a very long answer. '.repeat(200_000)}`; // 5.6 M characters

  it('a prediction longer than the NLI window is cut before any string is built from it, with a note', () => {
    const file = path.join(tmp(), 'preds.jsonl');
    writeFileSync(file, `${JSON.stringify({ id: 'd/1', utterance: huge })}\n${JSON.stringify({ id: 'd/3', utterance: 'Short.' })}\n`);
    const loaded = loadPredictions(file);
    expect(loaded.byId.get('d/1')!.length).toBe(MAX_PAIR_TEXT_CHARS);
    expect(loaded.byId.get('d/3')).toBe('Short.');
    expect(loaded.oversize).toEqual([`line 1 (id d/1): utterance of ${huge.length} characters cut to ${MAX_PAIR_TEXT_CHARS}`]);
  });

  it.skipIf(!hasShared('models', 'roberta-large-mnli', 'tokenizer.json'))('the cut changes nothing the model sees: same token ids as the whole text', () => {
    const tok = PairTokenizer.fromFiles(path.join(SHARED_TOKENIZER_DIR, 'tokenizer.json'), path.join(SHARED_TOKENIZER_DIR, 'tokenizer_config.json'));
    const long = huge.slice(0, 300_000); // long enough to be cut, short enough to tokenize whole here
    expect(capPairText(long).length).toBe(MAX_PAIR_TEXT_CHARS);
    const whole = tok.textIds(long).slice(0, tok.maxLength);
    expect(tok.encodePair(long, 'The answer is long.').ids.slice(1, 1 + 200)).toEqual(whole.slice(0, 200));
    expect(tok.encodePair(long, 'The answer is long.').ids).toHaveLength(tok.maxLength);
  });

  it('ser with a 5.6 M character prediction: exit 0 and one warning line naming it', async () => {
    const dir = tmp();
    mkdirSync(path.join(dir, 'p'));
    const ids = (await runCli(['refs', '--dialogues', path.join(MINI, 'dialogues.json'), '--schema', path.join(MINI, 'schema.json')])).stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    const preds = path.join(dir, 'p', 'preds.jsonl');
    writeFileSync(preds, [...new Set(ids)].map((id, i) => JSON.stringify({ id, utterance: i === 0 ? huge : 'Sure.' })).join('\n') + '\n');
    const r = await runCli(['ser', '--dialogues', path.join(MINI, 'dialogues.json'), '--schema', path.join(MINI, 'schema.json'), '-i', preds]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`todeval: warning: ${preds}: line 1 (id ${ids[0]}): utterance of ${huge.length} characters cut to ${MAX_PAIR_TEXT_CHARS} (the NLI model reads 512 tokens)\n`);
  }, 60_000);
});

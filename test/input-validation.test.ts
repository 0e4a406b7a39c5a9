import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDialogues } from '../src/metrics/gcdf1/evaluate.js';
import { loadPredictions } from '../src/metrics/predictions-file.js';
import { validatePredictions } from '../src/metrics/mwz/input.js';
import { loadSchemaFile } from '../src/schema/schema-index.js';
import { capPairText, MAX_PAIR_TEXT_CHARS } from '../src/nli/limits.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { InputError } from '../src/util/errors.js';
import { runCli } from './helpers/cli.js';
import { conversation, system, user } from './gcdf1-conversations.js';
import { DATA_DIR, hasData, REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';
import { refusal as oneLineOf } from './helpers/refusal.js';

const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');
const tmp = (): string => tempDir('inputs');

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
    expect(skipped.stderr).toContain(`todeval: warning: skipped invalid input: ${file}: ${d.dialogue_id}/${ti}: `);
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


describe('mwzeval predictions against schemas/mwz-predictions.schema.json', () => {
  const expectedTurns = { sng0073: 2 };
  const check = (second: unknown, opts: { strict?: boolean; skipInvalid?: boolean } = {}) =>
    validatePredictions({ sng0073: [{ response: 'a' }, second] }, { file: 'p.json', expectedTurns, ...opts });

  it('a number in a state is refused (was: coerced to a string), naming file, dialogue/turn and field', () => {
    expect(oneLineOf(() => check({ response: 'b', state: { hotel: { stars: 4 } } }))).toBe(
      'p.json: sng0073/turn 1: state.hotel.stars must be string (schemas/mwz-predictions.schema.json)',
    );
    expect(oneLineOf(() => check({ state: {} }))).toBe("p.json: sng0073/turn 1: must have required property 'response' (schemas/mwz-predictions.schema.json)");
    expect(oneLineOf(() => check({ response: 'b', active_domains: 'hotel' }))).toBe('p.json: sng0073/turn 1: active_domains must be array (schemas/mwz-predictions.schema.json)');
  });

  it('a state domain in another case is lowercased like active_domains (was: accepted, then never matched "hotel"); given twice is refused', () => {
    const r = check({ response: 'b', state: { Hotel: { area: 'north' } }, active_domains: ['Hotel'] });
    expect(r.dialogues.sng0073[1].state).toEqual({ hotel: { area: 'north' } });
    expect(r.dialogues.sng0073[1].active_domains).toEqual(['hotel']);
    expect(oneLineOf(() => check({ response: 'b', state: { Hotel: { area: 'north' }, hotel: { stars: '4' } } }))).toBe(
      'p.json: sng0073/turn 1: "state": domain "hotel" given twice (domains are case-insensitive)',
    );
  });

  it('a state slot MultiWOZ lacks is counted (kept), an error under --strict; spellings of known slots pass', () => {
    const known = { response: 'b', state: { hotel: { 'book people': '2', people: '2', pricerange: 'cheap' }, train: { arriveBy: '10:00', leaveAt: '09:00' } } };
    expect(check(known).unknownSlots).toEqual([]);
    const colour = { response: 'b', state: { hotel: { colour: 'blue', area: 'north' } } };
    const lenient = check(colour);
    expect(lenient.unknownSlots).toEqual([{ where: 'sng0073/turn 1', domain: 'hotel', slot: 'colour' }]);
    expect(lenient.dialogues.sng0073[1].state).toEqual(colour.state);
    expect(oneLineOf(() => check(colour, { strict: true }))).toMatch(/^p\.json: sng0073\/turn 1: "state\.hotel": unknown slot "colour" \(MultiWOZ hotel slots: area, /);
    expect(() => check(colour, { strict: true, skipInvalid: true })).toThrow(/no valid test dialogues/);
  });

  it.skipIf(!hasData('multiwoz', 'predictions', 'damd.json'))(
    'evaluate: DAMD\'s off-ontology slots are one counted warning line, and --strict refuses them',
    async () => {
      type Turn = { state?: Record<string, Record<string, string>> };
      const all = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json'), 'utf8')) as Record<string, Turn[]>;
      // Slots DAMD predicts in domains that do not have them (taxi area, hotel arrive, ...).
      const offOntology = new Set(['taxi.area', 'taxi.name', 'taxi.type', 'taxi.day', 'taxi.people', 'taxi.time', 'taxi.internet', 'attraction.day', 'attraction.departure', 'attraction.leave', 'hotel.arrive', 'train.time']);
      const slotsOf = (turns: Turn[]) => turns.flatMap((t) => Object.entries(t.state ?? {}).flatMap(([d, slots]) => Object.keys(slots).map((k) => `${d}.${k.toLowerCase().replace('arriveby', 'arrive').replace('leaveat', 'leave')}`)));
      const picked = Object.entries(all).filter(([, turns]) => slotsOf(turns).some((k) => offOntology.has(k))).slice(0, 10);
      expect(picked.length).toBeGreaterThan(0);
      const expected = picked.flatMap(([, turns]) => slotsOf(turns)).filter((k) => offOntology.has(k)).length;
      const file = path.join(tmp(), 'damd.json');
      writeFileSync(file, JSON.stringify(Object.fromEntries(picked)));
      const r = await runCli(['evaluate', '-i', file, '--dst', '--json', '--data-dir', DATA_DIR]);
      expect(r.code).toBe(0);
      const counts = (JSON.parse(r.stdout) as { details: { unknown_state_slots: Record<string, number> } }).details.unknown_state_slots;
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      expect(Object.keys(counts).every((k) => offOntology.has(k))).toBe(true);
      expect(total).toBe(expected);
      const lines = r.stderr.trim().split('\n').filter((l) => l.includes('slots MultiWOZ does not have'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`${file}: ${total} state slot value(s)`);
      const strict = await runCli(['evaluate', '-i', file, '--dst', '--strict', '--data-dir', DATA_DIR]);
      expect(strict.code).toBe(2);
      expect(strict.stderr.trim().split('\n')).toHaveLength(1);
      expect(strict.stderr).toMatch(/unknown slot "/);
    },
    60_000,
  );
});

describe('dataset schema files against schemas/sgd-schema.schema.json', () => {
  it('a mistyped field is one line naming file, service and field (was: coerced or dropped)', () => {
    const services = JSON.parse(readFileSync(path.join(MINI, 'schema.json'), 'utf8')) as { service_name: string; slots: { possible_values: unknown[]; is_categorical: unknown }[] }[];
    const dir = tmp();
    const numbers = path.join(dir, 'numbers.json');
    services[1].slots[0].possible_values = [1, 2];
    writeFileSync(numbers, JSON.stringify(services));
    expect(oneLineOf(() => loadSchemaFile(numbers))).toBe(`${numbers}: ${services[1].service_name}: slots.0.possible_values.0 must be string (schemas/sgd-schema.schema.json)`);
    services[1].slots[0].possible_values = [];
    services[1].slots[0].is_categorical = 'yes';
    const flag = path.join(dir, 'flag.json');
    writeFileSync(flag, JSON.stringify(services));
    expect(oneLineOf(() => loadSchemaFile(flag))).toBe(`${flag}: ${services[1].service_name}: slots.0.is_categorical must be boolean (schemas/sgd-schema.schema.json)`);
  });

  it.skipIf(!hasData('sgd', 'train', 'schema.json'))('the real SGD and MultiWOZ 2.2 schema files pass', () => {
    for (const f of [['sgd', 'train', 'schema.json'], ['sgd', 'test', 'schema.json'], ['multiwoz', 'schema.json']]) {
      expect(loadSchemaFile(path.join(DATA_DIR, ...f)).serviceNames().length).toBeGreaterThan(5);
    }
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

  it('the cut changes nothing the model sees: same token ids as the whole text', () => {
    const tok = PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), path.join(TOKENIZER_DIR, 'tokenizer_config.json'));
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

describe('delexicalized predictions for score and ser', () => {
  it('ser and score refuse utterances holding placeholders in one line with the count (exit 2); leaving them out with --allow-missing scores the rest', async () => {
    const dir = tmp();
    const mini = ['--dialogues', path.join(MINI, 'dialogues.json'), '--schema', path.join(MINI, 'schema.json')];
    const lines = readFileSync(path.join(MINI, 'predictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; utterance: string });
    // Two turns delexicalized as MultiWOZ systems write them, one in the angle-bracket form.
    const delex = lines.map((p, i) => (i === 1 ? { ...p, utterance: 'A [value_flavor] cake for [value_day]?' } : i === 4 ? { ...p, utterance: 'Pick it up at <pickup_location>.' } : p));
    const preds = path.join(dir, 'delex.jsonl');
    writeFileSync(preds, delex.map((p) => JSON.stringify(p)).join('\n') + '\n');
    const want = `todeval: ${preds}: 2 of ${lines.length} utterances hold delexicalization placeholders ([value_flavor], <pickup_location>): SGSAcc and SER score lexicalized text. Give the lexicalized utterances, or leave those turns out of the file and pass --allow-missing to score the others\n`;
    for (const cmd of ['ser', 'score']) {
      const r = await runCli([cmd, ...mini, '-i', preds, '-o', path.join(dir, `${cmd}.json`)]);
      expect([r.code, r.stderr], cmd).toEqual([2, want]);
    }
    const kept = path.join(dir, 'kept.jsonl');
    writeFileSync(kept, delex.filter((_, i) => i !== 1 && i !== 4).map((p) => JSON.stringify(p)).join('\n') + '\n');
    const ok = await runCli(['ser', ...mini, '-i', kept, '--allow-missing', '-o', path.join(dir, 'ser.json')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'ser.json'), 'utf8')).signature.missingPredictions).toBe(2);
  }, 60_000);
});

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidCollector } from '../src/adapters/collect.js';
import { readMultiwozTurns } from '../src/adapters/multiwoz.js';
import { readMultiwoz22Turns } from '../src/adapters/multiwoz22.js';
import { readSgdTurns } from '../src/adapters/sgd.js';
import { loadSchemaFile } from '../src/schema/schema-index.js';
import { REPO_ROOT } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';
import { refusal as oneLineOf } from './helpers/refusal.js';

// Malformed dataset fields: each must be one InputError naming the file and dialogue/turn (the CLI's
// one line, exit 2), and --skip-invalid must list it and keep the other turns. A TypeError from
// deep in a reader names neither, and the collector rethrows it even under --skip-invalid.

const tmp = tempDir('adapters-malformed');
const EXAMPLE_SCHEMA = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json');
const EXAMPLE_DIALOGUES = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json');
// The bundled SGD example's schema: the SGD cases need it; the MultiWOZ cases use general acts only,
// which are not checked against a schema.
const schema = loadSchemaFile(EXAMPLE_SCHEMA);


let folders = 0;
/** A MultiWOZ 2.2 split folder (dialogues_NNN.json, one per entry) and its dialog_acts.json. */
function mwz22Folder(files: unknown[][], acts: unknown): { dir: string; actsFile: string; files: string[] } {
  const root = path.join(tmp, `mwz22-${folders++}`);
  const dir = path.join(root, 'test');
  mkdirSync(dir, { recursive: true });
  const written = files.map((dialogues, i) => {
    const f = path.join(dir, `dialogues_00${i + 1}.json`);
    writeFileSync(f, JSON.stringify(dialogues));
    return f;
  });
  const actsFile = path.join(root, 'dialog_acts.json');
  writeFileSync(actsFile, JSON.stringify(acts));
  return { dir, actsFile, files: written };
}

const BYE = { dialog_act: { 'general-bye': [['none', 'none']] } };

describe('malformed fields are one line naming file and turn, skippable with --skip-invalid', () => {
  it('ConvLab: a dialog_act pair whose slot is null or a number (was: TypeError from slot.toLowerCase)', () => {
    for (const [name, pair] of [['null', [null, 'cheap']], ['number', [5, 'x']]] as const) {
      const file = path.join(tmp, `convlab-${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          X1: {
            goal: {},
            log: [
              { text: 'A cheap place, please.', dialog_act: {} },
              { text: 'There are some.', dialog_act: { 'Restaurant-Inform': [pair] } },
              { text: 'Thanks.', dialog_act: {} },
              { text: 'Bye.', ...BYE },
            ],
          },
        }),
      );
      expect(oneLineOf(() => readMultiwozTurns(file, schema, new InvalidCollector(false)))).toBe(
        `${file}: X1/1: malformed slot-value pair ${JSON.stringify(pair)} in "Restaurant-Inform" (expected [slot, value], two strings)`,
      );
      const skipping = new InvalidCollector(true);
      expect(readMultiwozTurns(file, schema, skipping).map((t) => t.id)).toEqual(['X1/3']);
      expect(skipping.invalid.map((e) => e.where)).toEqual(['X1/1']);
    }
  });

  it('MultiWOZ 2.2: a turn that is null (was: TypeError reading turn_id)', () => {
    const { dir, actsFile, files } = mwz22Folder(
      [[{ dialogue_id: 'PMUL0001.json', turns: [null, { turn_id: '1', speaker: 'SYSTEM', utterance: 'Bye.' }] }]],
      { 'PMUL0001.json': { '1': BYE } },
    );
    expect(oneLineOf(() => readMultiwoz22Turns(dir, actsFile, schema, new InvalidCollector(false)))).toBe(
      `${files[0]}: PMUL0001/0: wrong dataset format: turn is not an object {turn_id, speaker, utterance}`,
    );
    const skipping = new InvalidCollector(true);
    expect(readMultiwoz22Turns(dir, actsFile, schema, skipping).map((t) => t.id)).toEqual(['PMUL0001/1']);
    expect(skipping.invalid.map((e) => e.where)).toEqual(['PMUL0001/0']);
  });

  it('SGD: a user turn whose "frames" is an object or holds null (was: TypeError in activeIntents)', () => {
    const good = JSON.parse(readFileSync(EXAMPLE_DIALOGUES, 'utf8')) as { turns: { speaker: string; frames: unknown }[] }[];
    const cases: [string, unknown, string][] = [
      ['object', {}, '"frames" must be a list'],
      ['null', [null], 'each frame must be an object'],
    ];
    for (const [name, frames, why] of cases) {
      const d = structuredClone(good);
      expect(d[0].turns[0].speaker).toBe('USER');
      d[0].turns[0].frames = frames;
      const file = path.join(tmp, `sgd-frames-${name}.json`);
      writeFileSync(file, JSON.stringify(d));
      expect(oneLineOf(() => readSgdTurns([file], schema, new InvalidCollector(false)))).toBe(
        `${file}: mini_001/1: wrong dataset format: user turn 0 before this system turn: ${why}`,
      );
      const skipping = new InvalidCollector(true);
      // The bundled example has 9 system turns; only the one after the broken user turn goes.
      expect(readSgdTurns([file], schema, skipping)).toHaveLength(9 - 1);
      expect(skipping.invalid.map((e) => e.where)).toEqual(['mini_001/1']);
    }
  });
});

describe('MultiWOZ 2.2 turns are refused as SGD turns are', () => {
  it('a speaker other than "USER" or "SYSTEM" is refused naming the turn (was: the turn dropped without a word)', () => {
    const { dir, actsFile, files } = mwz22Folder(
      [[{
        dialogue_id: 'PMUL0002.json',
        turns: [
          { turn_id: '0', speaker: 'USER', utterance: 'Hello.' },
          { turn_id: '1', speaker: 'system', utterance: 'Hi.' },
          { turn_id: '2', speaker: 'USER', utterance: 'Bye.' },
          { turn_id: '3', speaker: 'SYSTEM', utterance: 'Bye.' },
          { turn_id: '4', utterance: 'Anything else?' },
        ],
      }]],
      { 'PMUL0002.json': { '0': { dialog_act: {} }, '1': BYE, '2': { dialog_act: {} }, '3': BYE, '4': BYE } },
    );
    expect(oneLineOf(() => readMultiwoz22Turns(dir, actsFile, schema, new InvalidCollector(false)))).toBe(
      `${files[0]}: PMUL0002/1: speaker must be "USER" or "SYSTEM", got "system"`,
    );
    const skipping = new InvalidCollector(true);
    expect(readMultiwoz22Turns(dir, actsFile, schema, skipping).map((t) => t.id)).toEqual(['PMUL0002/3']);
    expect(skipping.invalid.map((e) => e.oneLine())).toEqual([
      `${files[0]}: PMUL0002/1: speaker must be "USER" or "SYSTEM", got "system"`,
      `${files[0]}: PMUL0002/4: speaker must be "USER" or "SYSTEM", got undefined`,
    ]);
  });
});

describe('MultiWOZ 2.2 dialogue ids', () => {
  it('a dialogue seen twice, in one file or in two (by its bare id), is refused (was: its turns scored and counted twice)', () => {
    const dialogue = (dialogue_id: string) => ({
      dialogue_id,
      turns: [
        { turn_id: '0', speaker: 'USER', utterance: 'Thanks.' },
        { turn_id: '1', speaker: 'SYSTEM', utterance: 'Bye.' },
      ],
    });
    const { dir, actsFile, files } = mwz22Folder(
      [[dialogue('PMUL0003.json'), dialogue('PMUL0004.json'), dialogue('PMUL0004.json')], [dialogue('PMUL0003')]],
      { 'PMUL0003.json': { '0': { dialog_act: {} }, '1': BYE }, 'PMUL0004.json': { '0': { dialog_act: {} }, '1': BYE } },
    );
    expect(oneLineOf(() => readMultiwoz22Turns(dir, actsFile, schema, new InvalidCollector(false)))).toBe(
      `${files[0]}: PMUL0004.json: duplicate dialogue id (first in ${files[0]})`,
    );
    const skipping = new InvalidCollector(true);
    expect(readMultiwoz22Turns(dir, actsFile, schema, skipping).map((t) => t.id)).toEqual(['PMUL0003/1', 'PMUL0004/1']);
    expect(skipping.invalid.map((e) => e.oneLine())).toEqual([
      `${files[0]}: PMUL0004.json: duplicate dialogue id (first in ${files[0]})`,
      `${files[1]}: PMUL0003: duplicate dialogue id (first in ${files[0]})`,
    ]);
  });
});

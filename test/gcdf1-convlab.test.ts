import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCanonicalValues } from '../src/metrics/gcdf1/canonical-values.js';
import { loadConfig } from '../src/metrics/gcdf1/config.js';
import { aggregate, behaviourCounts, evaluateDialogue, loadDialogues, makeEvaluator } from '../src/metrics/gcdf1/evaluate.js';
import type { Dialogue } from '../src/metrics/gcdf1/types.js';
import { conversation, system, user } from './gcdf1-conversations.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { runBuiltCli } from './helpers/cli.js';
import { mapYielding } from './helpers/yield.js';
import { tempDir } from './helpers/temp.js';

const GCDF1 = path.join(DATA_DIR, 'gcdf1');
const BASELINE = path.join(GCDF1, 'convlab_baselines', 'test');

/**
 * Scores printed by the reference implementation's release (models/convlab_baselines/test/baseline.json
 * in github.com/alexcoca/gcdf1, run with multiwoz_user_evaluator.yaml and the MultiWOZ 2.1 canonical map).
 */
const REFERENCE_RELEASE = {
  igcd_f1: { attraction: 0.7885070036585189, combined: 0.6231143887917199, hotel: 0.5047102451034247, restaurant: 0.4565253397116188, taxi: 0.48205128205128206, train: 0.7058769513314967 },
  igcd_precision: { attraction: 0.98989898989899, combined: 0.6256781773320464, hotel: 0.594662623222836, restaurant: 0.47893205996051014, taxi: 1.0, train: 0.9946416546416547 },
  igcd_recall: { attraction: 0.759301346801347, combined: 0.8439032657663796, hotel: 0.8268119782079174, restaurant: 0.8912771058079982, taxi: 0.48205128205128206, train: 0.7041414141414142 },
  rgcd_f1: { attraction: 0.7187562409618123, combined: 0.6919862685933005, hotel: 0.7704008617864051, restaurant: 0.8730790265244736, taxi: 0.48205128205128206, train: 0.658012250543371 },
  rgcd_precision: { attraction: 0.8568874227865292, combined: 0.9006772219634182, hotel: 0.8879952428688578, restaurant: 0.9454705947258083, taxi: 1.0, train: 0.996473029045643 },
  // the release names this key `rcgd_recall`
  rgcd_recall: { attraction: 0.8434599156118142, combined: 0.7437999159310634, hotel: 0.8508771929824562, restaurant: 0.9182389937106918, taxi: 0.48205128205128206, train: 0.6524896265560166 },
};

/** Per-dialogue F1 of the first dialogues of dialogues_001.json in the same release (score_distributions). */
const RELEASE_DIALOGUES: Record<string, { igcd: Record<string, number>; rgcd: Record<string, number> }> = {
  'PMUL3875.json': { igcd: { restaurant: 0.190476, train: 0 }, rgcd: { train: 0 } },
  'SNG01165.json': { igcd: { restaurant: 0.181818 }, rgcd: {} },
  'MUL1350.json': { igcd: { hotel: 0.181818, restaurant: 0, taxi: 0 }, rgcd: { taxi: 0 } },
  'MUL2423.json': { igcd: { attraction: 0.666667, restaurant: 1, taxi: 1 }, rgcd: { attraction: 1, restaurant: 1, taxi: 1 } },
  'PMUL1118.json': { igcd: { attraction: 0.666667, train: 1 }, rgcd: { attraction: 1, train: 1 } },
  'MUL1055.json': { igcd: { attraction: 1, hotel: 0.271186, taxi: 0 }, rgcd: { attraction: 1, taxi: 0 } },
  'PMUL1323.json': { igcd: { attraction: 1, train: 1 }, rgcd: { attraction: 1 } },
  'SNG0767.json': { igcd: { hotel: 0.25 }, rgcd: {} },
};

const haveData = hasData('gcdf1', 'convlab_baselines', 'test', 'dialogues_001.json');

describe.skipIf(!haveData)('GCDF1 on the convlab baseline conversations', () => {
  const config = () => loadConfig(path.join(GCDF1, 'multiwoz_user_evaluator.yaml'));
  const cmap = () => loadCanonicalValues(path.join(GCDF1, 'resources', 'multiwoz21_canonical_map.json'));

  it('scores the first dialogues of dialogues_001.json per domain as the reference release', () => {
    const dialogues = JSON.parse(readFileSync(path.join(BASELINE, 'dialogues_001.json'), 'utf8')) as Dialogue[];
    const ev = makeEvaluator(config(), cmap());
    for (const d of dialogues.slice(0, 8)) {
      const r = evaluateDialogue(d, ev);
      const expected = RELEASE_DIALOGUES[d.dialogue_id];
      const domains = (s: Record<string, unknown>) => Object.keys(s).filter((k) => k !== 'combined').sort();
      expect(domains(r.scores.igcd_f1)).toEqual(Object.keys(expected.igcd).sort());
      expect(domains(r.scores.rgcd_f1)).toEqual(Object.keys(expected.rgcd).sort());
      for (const [dom, f1] of Object.entries(expected.igcd)) expect(r.scores.igcd_f1[dom].f1).toBeCloseTo(f1, 5);
      for (const [dom, f1] of Object.entries(expected.rgcd)) expect(r.scores.rgcd_f1[dom].f1).toBeCloseTo(f1, 5);
    }
  });

  it('matches the reference on all 1,000 conversations (paper: I-GCDF1 0.623, R-GCDF1 0.692)', async () => {
    const { dialogues, invalid } = loadDialogues(BASELINE);
    expect(dialogues).toHaveLength(1000);
    expect(invalid).toEqual([]);
    const ev = makeEvaluator(config(), cmap());
    // in chunks, the worker's event loop getting a turn between them (1.6 s of CPU in one piece)
    const records = await mapYielding(dialogues, (d) => evaluateDialogue(d, ev));
    const scores = aggregate(records);
    expect(scores.igcd_f1.combined).toBeCloseTo(0.623, 3);
    expect(scores.rgcd_f1.combined).toBeCloseTo(0.692, 3);
    for (const [metric, table] of Object.entries(REFERENCE_RELEASE)) {
      const ours = scores[metric as keyof typeof REFERENCE_RELEASE];
      expect(Object.keys(ours).sort()).toEqual(Object.keys(table).sort());
      for (const [key, value] of Object.entries(table)) expect(ours[key], `${metric}.${key}`).toBeCloseTo(value, 12);
    }
    expect(scores.counts.igcd_f1).toEqual({ attraction: 396, combined: 1000, hotel: 394, restaurant: 437, taxi: 195, train: 495 });
    expect(scores.counts.rgcd_f1).toEqual({ attraction: 395, combined: 793, hotel: 152, restaurant: 159, taxi: 195, train: 241 });
    // behaviour counts of the same release's metadata
    const b = behaviourCounts(records);
    expect(b.igcd_f1['multiple_constraint_informs.elicited_by_no_offers']).toBe(926);
    expect(b.igcd_f1['multiple_constraint_informs.repeated_while_booking']).toBe(199);
    expect(b.igcd_f1['constraints_not_in_goal.elicited_by_sys_offer']).toBe(20);
    expect(b.igcd_f1.failed_dialogue).toBe(21);
    expect(b.igcd_f1.sys_preempted_constraint).toBe(5);
    expect(b.rgcd_f1['multiple_slot_requests.repeated_despite_receiving_answer']).toBe(1300);
    expect(b.rgcd_f1.provision_entire_domain).toBe(128);
  });
});

const built = existsSync(path.join(REPO_ROOT, 'dist', 'src', 'cli', 'commands', 'gcdf1.js'));

describe.skipIf(!built)('todeval gcdf1 (CLI)', () => {
  const good = conversation({ hotel: { info: { area: 'north' }, reqt: { phone: '?' } } }, [
    user([['Hotel-Inform', 'area', 'north'], ['Hotel-Request', 'phone']]),
    system([['Hotel-Inform', 'phone', '01223']]),
  ]);
  const bad = { ...good, dialogue_id: 'BROKEN.json', goal: { spaceship: { info: {} } } };
  const dir = tempDir('gcdf1-cli');
  writeFileSync(path.join(dir, 'dialogues_001.json'), JSON.stringify([good, bad]));
  const run = (...args: string[]) => runBuiltCli(['gcdf1', '--dialogues', dir, '--no-canonical-map', ...args]);

  it('exits 2 with one line naming the malformed dialogue', async () => {
    const r = await run();
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('dialogue BROKEN.json: unknown domain "spaceship" in goal');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('with --skip-invalid lists it, scores the rest and writes both outputs', async () => {
    // Outputs go outside the dialogues folder: one inside it is refused (it is read as input).
    const outDir = tempDir('gcdf1-cli-out');
    const out = path.join(outDir, 'out.json');
    const per = path.join(outDir, 'per.json');
    const r = await run('--skip-invalid', '-o', out, '--per-dialogue', per);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('skipped');
    expect(r.stderr).toContain('BROKEN.json');
    expect(r.stdout).toMatch(/I-GCDF1 F1\s+1\.000/);
    const json = JSON.parse(readFileSync(out, 'utf8'));
    for (const key of ['igcd_f1', 'igcd_precision', 'igcd_recall', 'rgcd_f1', 'rgcd_precision', 'rgcd_recall']) {
      expect(json[key]).toEqual({ combined: 1, hotel: 1 });
    }
    expect(json.metadata.signature).toMatchObject({ tool: 'todeval', metric: 'gcdf1', canonicalMap: 'none', dialogues: 1, skipped: 1 });
    const perDialogue = JSON.parse(readFileSync(per, 'utf8'));
    expect(Object.keys(perDialogue.dialogues)).toEqual(['TEST0001.json']);
    expect(perDialogue.dialogues['TEST0001.json'].scores.rgcd_f1.hotel).toEqual({ f1: 1, precision: 1, recall: 1 });
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface SgdDialogue {
  dialogue_id: string;
  turns: { speaker: string; utterance: string; frames: { actions: { values: string[] }[] }[] }[];
}

export interface Prediction {
  id: string;
  utterance: string;
}

/**
 * A second "system" for the report's benchmarks and screenshots and for the tests that need one:
 * every system turn of the SGD dialogue files as the ground truth has it, except that in every
 * other turn that says one of its slot values verbatim that value becomes "Zanzibar" (an unfaithful
 * reply the report should list). One prediction per system turn, in file and turn order; "every
 * other" counts across the files.
 */
export function zanzibarSystem(files: string[]): Prediction[] {
  const predictions: Prediction[] = [];
  let withValue = 0;
  for (const file of files) {
    const dialogues = JSON.parse(readFileSync(file, 'utf8')) as SgdDialogue[];
    for (const d of dialogues) {
      d.turns.forEach((t, i) => {
        if (t.speaker !== 'SYSTEM') return;
        const value = t.frames.flatMap((fr) => fr.actions.flatMap((a) => a.values)).find((v) => v.length > 2 && t.utterance.includes(v));
        const swap = value !== undefined && withValue++ % 2 === 0;
        predictions.push({ id: `${d.dialogue_id}/${i}`, utterance: swap ? t.utterance.split(value).join('Zanzibar') : t.utterance });
      });
    }
  }
  return predictions;
}

/** The predictions as JSONL text, one `{id, utterance}` line each. */
export function predictionsJsonl(predictions: Prediction[]): string {
  return predictions.map((p) => JSON.stringify(p)).join('\n') + '\n';
}

/** zanzibarSystem over every dialogues_*.json of an SGD test folder, as JSONL text. */
export function zanzibarPredictions(sgdTestDir: string): string {
  const files = readdirSync(sgdTestDir).filter((n) => n.startsWith('dialogues_')).sort();
  return predictionsJsonl(zanzibarSystem(files.map((f) => path.join(sgdTestDir, f))));
}

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface SgdDialogue {
  dialogue_id: string;
  turns: { speaker: string; utterance: string; frames: { actions: { values: string[] }[] }[] }[];
}

/**
 * A second "system" for the report's benchmarks and screenshots: every SGD test system turn as the
 * ground truth has it, except that in every other turn that says one of its slot values verbatim
 * that value becomes "Zanzibar" (an unfaithful reply the report should list). JSONL text, one
 * `{id, utterance}` line per system turn, in file and turn order.
 */
export function zanzibarPredictions(sgdTestDir: string): string {
  const predictions: string[] = [];
  let withValue = 0;
  for (const file of readdirSync(sgdTestDir).filter((n) => n.startsWith('dialogues_')).sort()) {
    const dialogues = JSON.parse(readFileSync(path.join(sgdTestDir, file), 'utf8')) as SgdDialogue[];
    for (const d of dialogues) {
      d.turns.forEach((t, i) => {
        if (t.speaker !== 'SYSTEM') return;
        const value = t.frames.flatMap((fr) => fr.actions.flatMap((a) => a.values)).find((v) => v.length > 2 && t.utterance.includes(v));
        const swap = value !== undefined && withValue++ % 2 === 0;
        predictions.push(JSON.stringify({ id: `${d.dialogue_id}/${i}`, utterance: swap ? t.utterance.split(value).join('Zanzibar') : t.utterance }));
      });
    }
  }
  return predictions.join('\n') + '\n';
}

import { pickOther, type ValueIndex } from '../../src/rules/value-index.js';

interface SwappableTurn {
  id: string;
  utterance: string;
  actions: { service: string; slot: string; values: string[] }[];
}

/**
 * A second "system" for benchmarks: the ground truth with, per turn, the first slot value that
 * occurs verbatim replaced by another value of the same slot (a deterministic hallucination), so
 * some actions fail and take the context pass.
 */
export function swapOneValuePerTurn(turns: SwappableTurn[], values: ValueIndex): { utterances: Map<string, string>; swaps: number } {
  const utterances = new Map<string, string>();
  let swaps = 0;
  for (const t of turns) {
    let text = t.utterance;
    for (const a of t.actions) {
      const v = a.values.find((x) => x.length > 1 && text.includes(x));
      if (!v) continue;
      const other = pickOther(values.values(a.service, a.slot), a.values, `${t.id}/${a.slot}`);
      if (!other) continue;
      text = text.replace(v, other);
      swaps++;
      break;
    }
    utterances.set(t.id, text);
  }
  return { utterances, swaps };
}

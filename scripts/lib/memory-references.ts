import type { runSgsacc, TurnReferences } from '../../src/metrics/sgsacc/index.js';

/**
 * Stored references held in memory, for benches and tests that score several systems on one set
 * of references without a file: the RecordStore's `done` map is all runSgsacc reads, and what it
 * appends is dropped (the map already holds it).
 */
export function memoryReferences(refs: Map<string, TurnReferences>): NonNullable<Parameters<typeof runSgsacc>[2]['references']> {
  return { done: refs, append: () => {} } as unknown as NonNullable<Parameters<typeof runSgsacc>[2]['references']>;
}

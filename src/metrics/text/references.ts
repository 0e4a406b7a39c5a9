/**
 * Reference streams as BLEU, chrF and TER take them (sacreBLEU's layout): `references[k][i]` is the
 * k-th reference for segment i, and `null` gives a segment fewer references. The checks and the
 * per-segment lines are the same for the three metrics; only the name in the messages differs.
 */

export interface ReferenceSegments {
  /** Segments per stream (every stream has as many). */
  segments: number;
  /** Per segment, its non-null references in stream order. */
  lines: string[][];
  /** References per segment, or -1 when it varies (`nrefs:var`). */
  nrefs: number;
}

/**
 * Checks that there are streams and that they are equally long, then gathers each segment's
 * references. `metricName` begins the error messages (`BLEU`, `chrF`, `TER`).
 */
export function referenceSegments(references: ReadonlyArray<ReadonlyArray<string | null>>, metricName: string): ReferenceSegments {
  if (references.length === 0) throw new Error(`${metricName}: no reference streams`);
  const segments = references[0].length;
  for (const [k, stream] of references.entries()) {
    if (stream.length !== segments) throw new Error(`${metricName}: reference stream ${k} has ${stream.length} segments, stream 0 has ${segments}`);
  }
  const nrefsSeen = new Set<number>();
  const lines: string[][] = [];
  for (let i = 0; i < segments; i++) {
    const segment = references.map((stream) => stream[i]).filter((r): r is string => r !== null && r !== undefined);
    nrefsSeen.add(segment.length);
    lines.push(segment);
  }
  return { segments, lines, nrefs: nrefsSeen.size === 1 ? [...nrefsSeen][0] : -1 };
}

/**
 * The corpus functions' check: there are streams, and each has one segment per hypothesis (unlike
 * sacreBLEU, which truncates silently). `metricName` begins the messages (`corpusBleu`, ...).
 */
export function checkStreams(metricName: string, hypotheses: readonly string[], references: ReadonlyArray<ReadonlyArray<string | null>>): void {
  if (references.length === 0) throw new Error(`${metricName}: no reference streams`);
  for (const [k, stream] of references.entries()) {
    if (stream.length !== hypotheses.length) {
      throw new Error(`${metricName}: reference stream ${k} has ${stream.length} segments, hypotheses have ${hypotheses.length}`);
    }
  }
}

/** A batch of token rows right-padded to its longest row: the model's two int64 inputs, row-major. */
export interface PaddedBatch {
  rows: number;
  width: number;
  /** [rows, width] token ids, `padId` after each row's end. */
  inputIds: BigInt64Array;
  /** [rows, width] 1 on real tokens, 0 on padding. */
  attentionMask: BigInt64Array;
  /**
   * [rows, width] segment ids (0 on padding), only where the pair encoding has a non-zero one;
   * absent means all zero.
   */
  tokenTypeIds?: BigInt64Array;
}

/** Index of an int64's low 32-bit word within its pair of words (0 on little-endian machines). */
const LOW_WORD = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;

/**
 * Packs batches into buffers reused from batch to batch, so a batch costs no allocation beyond two
 * array views. Ids are written through 32-bit views of the int64 buffers (the low word; the high
 * word stays 0, as token ids are small and non-negative), not as one BigInt per token.
 *
 * `slots` buffer pairs are used in turn: a packed batch stays intact until `slots` more batches
 * have been packed, so one can be packed while the one before it is still being read.
 */
export class BatchPacker {
  private readonly buffers: { ids: ArrayBufferLike; mask: ArrayBufferLike; types: ArrayBufferLike }[] = [];
  private next = 0;
  private row = new Int32Array(64);
  private rowTypes = new Int32Array(64);

  /**
   * `shared`: the buffers are SharedArrayBuffers, so a batch reaches another thread (the session
   * thread) without a copy; the packer's slots then guard it, as they guard a batch read here.
   * `segments`: batches carry segment ids (tokenTypeIds), which `fill` writes.
   */
  constructor(
    readonly padId: number,
    readonly slots = 2,
    readonly shared = false,
    readonly segments = false,
  ) {
    if (!Number.isInteger(padId) || padId < 0 || padId > 0x7fffffff) throw new Error(`pad id ${padId} is not a small non-negative integer`);
    for (let i = 0; i < slots; i++) this.buffers.push({ ids: this.allocate(0), mask: this.allocate(0), types: this.allocate(0) });
  }

  private allocate(bytes: number): ArrayBufferLike {
    return this.shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  }

  /**
   * A batch of `rows` rows, `width` wide: `fill(row, r, types)` writes row `r`'s token ids into `row`
   * (room for `width`), and with `segments` their segment ids into `types`, and returns how many it
   * wrote; the rest of the row is padded and masked here.
   */
  pack(rows: number, width: number, fill: (row: Int32Array, r: number, types?: Int32Array) => number): PaddedBatch {
    const n = rows * width;
    const slot = this.buffers[this.next];
    this.next = (this.next + 1) % this.slots;
    if (slot.ids.byteLength < n * 8) {
      // Fresh buffers are zero: the high words stay 0 for good, only low words are written below.
      const bytes = Math.max(n * 8, slot.ids.byteLength * 2);
      slot.ids = this.allocate(bytes);
      slot.mask = this.allocate(bytes);
      if (this.segments) slot.types = this.allocate(bytes);
    }
    if (this.row.length < width) {
      this.row = new Int32Array(Math.max(width, this.row.length * 2));
      this.rowTypes = new Int32Array(this.row.length);
    }
    const row = this.row;
    const ids32 = new Int32Array(slot.ids, 0, n * 2);
    const mask32 = new Int32Array(slot.mask, 0, n * 2);
    const types32 = this.segments ? new Int32Array(slot.types, 0, n * 2) : undefined;
    const rowTypes = this.rowTypes;
    const pad = this.padId;
    for (let r = 0; r < rows; r++) {
      const used = fill(row, r, types32 ? rowTypes : undefined);
      if (used > width) throw new Error(`row ${r} has ${used} tokens, more than the batch width ${width}`);
      let k = r * width * 2 + LOW_WORD;
      for (let j = 0; j < used; j++, k += 2) {
        ids32[k] = row[j];
        mask32[k] = 1;
      }
      for (let j = used; j < width; j++, k += 2) {
        ids32[k] = pad;
        mask32[k] = 0;
      }
      if (types32) {
        // Padding takes segment 0, as the library pads.
        let t = r * width * 2 + LOW_WORD;
        for (let j = 0; j < used; j++, t += 2) types32[t] = rowTypes[j];
        for (let j = used; j < width; j++, t += 2) types32[t] = 0;
      }
    }
    const batch: PaddedBatch = { rows, width, inputIds: new BigInt64Array(slot.ids, 0, n), attentionMask: new BigInt64Array(slot.mask, 0, n) };
    if (types32) batch.tokenTypeIds = new BigInt64Array(slot.types, 0, n);
    return batch;
  }
}

/** Token rows (plain arrays) packed into a new padded batch, with their segment ids if given: for benches and tests. */
export function padRows(ids: readonly (readonly number[])[], padId: number, typeIds?: readonly (readonly number[])[]): PaddedBatch {
  const width = ids.reduce((m, r) => Math.max(m, r.length), 0);
  return new BatchPacker(padId, 1, false, typeIds !== undefined).pack(ids.length, width, (out, r, types) => {
    out.set(ids[r]);
    types?.set(typeIds![r]);
    return ids[r].length;
  });
}

/** The token rows of a padded batch, without their padding (for checks). */
export function unpadRows(batch: PaddedBatch): number[][] {
  const out: number[][] = [];
  for (let r = 0; r < batch.rows; r++) {
    const row: number[] = [];
    for (let j = 0; j < batch.width; j++) {
      const k = r * batch.width + j;
      if (batch.attentionMask[k] === 0n) break;
      row.push(Number(batch.inputIds[k]));
    }
    out.push(row);
  }
  return out;
}

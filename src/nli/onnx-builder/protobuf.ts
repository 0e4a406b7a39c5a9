import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * Bytes whose length is known up front but whose content is made only when written. Protobuf needs
 * every length before the bytes it covers; deferring the content lets a 1.4 GB model stream to disk
 * one tensor at a time instead of being held in memory whole.
 */
export interface LazyBytes {
  readonly length: number;
  produce(): Uint8Array;
}

export type Part = Uint8Array | LazyBytes;

const WIRE_VARINT = 0;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

/** Varint of a non-negative integer below 2^53, or a negative int64 as its 10-byte two's complement. */
export function encodeVarint(value: number | bigint): Uint8Array {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new RangeError(`varint of a non-integer: ${value}`);
    if (value < 0) return encodeVarint(BigInt(value));
    const out: number[] = [];
    let v = value;
    // Division rather than bit shifts: JS bit operators truncate to 32 bits.
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
    return Uint8Array.from(out);
  }
  let v = BigInt.asUintN(64, value);
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

function tag(field: number, wire: number): Uint8Array {
  return encodeVarint(field * 8 + wire);
}

const utf8 = new TextEncoder();

/**
 * One protobuf message under construction: a flat list of parts. Nested messages are spliced in
 * (header + their parts), so writing never recurses and big payloads stay lazy.
 */
export class MessageWriter {
  readonly parts: Part[] = [];
  length = 0;

  private push(p: Part): void {
    this.parts.push(p);
    this.length += p.length;
  }

  varint(field: number, value: number | bigint): this {
    this.push(tag(field, WIRE_VARINT));
    this.push(encodeVarint(value));
    return this;
  }

  /** Repeated scalar written unpacked: proto2 (onnx.proto) default, accepted by every parser. */
  varints(field: number, values: readonly (number | bigint)[]): this {
    for (const v of values) this.varint(field, v);
    return this;
  }

  float32(field: number, value: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(tag(field, WIRE_FIXED32));
    this.push(b);
    return this;
  }

  bytes(field: number, data: Part): this {
    this.push(tag(field, WIRE_LEN));
    this.push(encodeVarint(data.length));
    this.push(data);
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, utf8.encode(s));
  }

  /** Bytes already encoded as whole fields (tag included), e.g. copied verbatim from another message. */
  raw(encoded: Part): this {
    this.push(encoded);
    return this;
  }

  message(field: number, msg: MessageWriter): this {
    this.push(tag(field, WIRE_LEN));
    this.push(encodeVarint(msg.length));
    for (const p of msg.parts) this.push(p);
    return this;
  }
}

/**
 * Copies small parts into one staging buffer so a model with thousands of fields costs few
 * syscalls. `sink` takes each staged run at once and in full (the buffer is reused after it returns).
 */
class StagedWriter {
  private readonly stage = Buffer.allocUnsafe(1 << 22);
  private used = 0;
  constructor(
    private readonly sink: (bytes: Uint8Array) => void,
    private readonly hash: Hash,
  ) {}

  write(bytes: Uint8Array): void {
    if (bytes.length > this.stage.length - this.used) this.flush();
    if (bytes.length >= this.stage.length) {
      this.writeAll(bytes);
      return;
    }
    this.stage.set(bytes, this.used);
    this.used += bytes.length;
  }

  flush(): void {
    if (this.used === 0) return;
    this.writeAll(this.stage.subarray(0, this.used));
    this.used = 0;
  }

  private writeAll(bytes: Uint8Array): void {
    this.hash.update(bytes);
    this.sink(bytes);
  }
}

/**
 * Streams a message's bytes, in order, to `sink` (which must take each call's bytes whole before it
 * returns); returns the sha256 (hex) and byte size of what was written. For a writer other than a
 * plain file: the q8 model goes through an atomic write (src/util/atomic-write.ts).
 */
export function writeMessage(msg: MessageWriter, sink: (bytes: Uint8Array) => void): { sha256: string; bytes: number } {
  const hash = createHash('sha256');
  const out = new StagedWriter(sink, hash);
  for (const p of msg.parts) {
    const bytes = p instanceof Uint8Array ? p : p.produce();
    if (bytes.length !== p.length) {
      throw new Error(`lazy part produced ${bytes.length} bytes, declared ${p.length}`);
    }
    out.write(bytes);
  }
  out.flush();
  return { sha256: hash.digest('hex'), bytes: msg.length };
}

/** Writes a message to a file; returns the sha256 (hex) and byte size of what was written. */
export function writeMessageToFile(msg: MessageWriter, file: string): { sha256: string; bytes: number } {
  const fd = openSync(file, 'w');
  try {
    return writeMessage(msg, (bytes) => {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    });
  } finally {
    closeSync(fd);
  }
}

/** The whole message in memory; for small messages and tests of the encoder. */
export function messageToBytes(msg: MessageWriter): Uint8Array {
  const out = new Uint8Array(msg.length);
  let off = 0;
  for (const p of msg.parts) {
    const bytes = p instanceof Uint8Array ? p : p.produce();
    out.set(bytes, off);
    off += bytes.length;
  }
  return out;
}

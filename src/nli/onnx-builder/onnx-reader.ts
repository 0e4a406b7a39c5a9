import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { GraphField, ModelField } from './onnx-proto.js';

/**
 * Just enough of a protobuf reader to rewrite an ONNX export without holding it in memory: fields
 * are located by offset, small messages (nodes, tensor headers) are decoded, and big payloads
 * (weights) stay where they are until a writer asks for their bytes. A 1.4 GB fp32 export is
 * walked with a few thousand small reads.
 */

/** Random access to the bytes of a file (or of an in-memory message, for tests). */
export interface ByteSource {
  readonly length: number;
  read(offset: number, length: number): Uint8Array;
  /** Fills `target` from `offset`: weights go straight into their aligned array, with no copy to collect. */
  readInto?(target: Uint8Array, offset: number): void;
}

export class FileSource implements ByteSource {
  readonly length: number;
  private readonly fd: number;
  constructor(readonly file: string) {
    this.fd = openSync(file, 'r');
    this.length = fstatSync(this.fd).size;
  }
  read(offset: number, length: number): Uint8Array {
    const out = Buffer.allocUnsafe(length);
    this.readInto(out, offset);
    return out;
  }
  readInto(target: Uint8Array, offset: number): void {
    let got = 0;
    while (got < target.length) {
      const n = readSync(this.fd, target, got, target.length - got, offset + got);
      if (n === 0) throw new Error(`${this.file}: unexpected end of file at byte ${offset + got}`);
      got += n;
    }
  }
  close(): void {
    closeSync(this.fd);
  }
}

export function bufferSource(bytes: Uint8Array): ByteSource {
  return { length: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/** One field of a message: where its tag starts, where its payload lies, where it ends. */
export interface Field {
  field: number;
  wire: number;
  /** Whole field, tag included: [start, end). */
  start: number;
  end: number;
  /** Payload of a length-delimited field. */
  offset: number;
  length: number;
  /** Value of a varint field (exact below 2^53). */
  value: number;
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

function varintAt(bytes: Uint8Array, pos: number): { value: number; next: number } {
  let value = 0;
  let mul = 1;
  for (let i = pos; i < pos + 10; i++) {
    if (i >= bytes.length) throw new Error('truncated varint');
    const b = bytes[i];
    value += (b & 0x7f) * mul;
    mul *= 128;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  throw new Error('varint longer than 10 bytes');
}

/** The fields of the message in source[start, end), read tag by tag (payloads are skipped, not read). */
export function fieldsOf(src: ByteSource, start = 0, end = src.length): Field[] {
  const out: Field[] = [];
  let pos = start;
  while (pos < end) {
    const head = src.read(pos, Math.min(20, end - pos));
    const tag = varintAt(head, 0);
    const field = Math.floor(tag.value / 8);
    const wire = tag.value % 8;
    let p = tag.next;
    let offset = pos + p;
    let length = 0;
    let value = 0;
    if (wire === WIRE_VARINT) {
      const v = varintAt(head, p);
      value = v.value;
      length = v.next - p;
    } else if (wire === WIRE_LEN) {
      const v = varintAt(head, p);
      length = v.value;
      offset = pos + v.next;
    } else if (wire === WIRE_FIXED32) {
      length = 4;
    } else if (wire === WIRE_FIXED64) {
      length = 8;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire} at byte ${pos}`);
    }
    const fieldEnd = offset + length;
    if (fieldEnd > end) throw new Error(`protobuf field ${field} at byte ${pos} runs past its message (${fieldEnd} > ${end})`);
    out.push({ field, wire, start: pos, end: fieldEnd, offset, length, value });
    pos = fieldEnd;
  }
  return out;
}

const utf8 = new TextDecoder();
const text = (src: ByteSource, f: Field): string => utf8.decode(src.read(f.offset, f.length));

/** String field `field` of the message `f` (its first occurrence), '' where absent as in proto3. */
export function stringFieldOf(src: ByteSource, f: Field, field: number): string {
  const g = fieldsOf(src, f.offset, f.end).find((x) => x.field === field);
  return g ? text(src, g) : '';
}

/** A NodeProto's wiring; its bytes stay in the source for a verbatim copy. */
export interface NodeInfo {
  opType: string;
  domain: string;
  name: string;
  inputs: string[];
  outputs: string[];
  /** The node's integer attributes (AttributeProto.i), by name: what a rewrite needs to read. */
  ints: Map<string, number>;
  field: Field;
}

/** A varint as a signed int64 (two's complement, as protobuf writes int64), exact where a double would round. */
function int64At(bytes: Uint8Array): number {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 7n) | BigInt(bytes[i] & 0x7f);
  return Number(BigInt.asIntN(64, v));
}

/** An AttributeProto's name and, where it has one, its integer (field 3). */
function intAttribute(bytes: ByteSource, f: Field): { name: string; value?: number } {
  let name = '';
  let value: number | undefined;
  for (const g of fieldsOf(bytes, f.offset, f.end)) {
    if (g.field === 1) name = text(bytes, g);
    else if (g.field === 3 && g.wire === WIRE_VARINT) value = int64At(bytes.read(g.offset, g.length));
  }
  return { name, value };
}

export function readNode(src: ByteSource, f: Field): NodeInfo {
  const bytes = bufferSource(src.read(f.offset, f.length));
  const node: NodeInfo = { opType: '', domain: '', name: '', inputs: [], outputs: [], ints: new Map(), field: f };
  for (const g of fieldsOf(bytes)) {
    if (g.field === 1) node.inputs.push(text(bytes, g));
    else if (g.field === 2) node.outputs.push(text(bytes, g));
    else if (g.field === 3) node.name = text(bytes, g);
    else if (g.field === 4) node.opType = text(bytes, g);
    else if (g.field === 7) node.domain = text(bytes, g);
    else if (g.field === 5) {
      const a = intAttribute(bytes, g);
      if (a.value !== undefined) node.ints.set(a.name, a.value);
    }
  }
  return node;
}

/** A TensorProto's header and where its data lies (raw_data, or packed float_data: the same bytes). */
export interface TensorInfo {
  name: string;
  dataType: number;
  dims: number[];
  /** Little-endian element bytes in the source; undefined when stored another way. */
  data?: { offset: number; length: number };
  external: boolean;
  field: Field;
}

export function readTensor(src: ByteSource, f: Field): TensorInfo {
  const t: TensorInfo = { name: '', dataType: 0, dims: [], external: false, field: f };
  for (const g of fieldsOf(src, f.offset, f.end)) {
    if (g.field === 1 && g.wire === WIRE_VARINT) t.dims.push(g.value);
    else if (g.field === 1 && g.wire === WIRE_LEN) {
      const packed = src.read(g.offset, g.length);
      for (let p = 0; p < packed.length; ) {
        const v = varintAt(packed, p);
        t.dims.push(v.value);
        p = v.next;
      }
    } else if (g.field === 2) t.dataType = g.value;
    else if (g.field === 8) t.name = text(src, g);
    else if (g.field === 9 || (g.field === 4 && g.wire === WIRE_LEN)) t.data = { offset: g.offset, length: g.length };
    else if (g.field === 13) t.external = true;
    else if (g.field === 14 && g.value === 1) t.external = true;
  }
  return t;
}

/** metadata_props (field 14 of ModelProto) as a map: read from the top-level fields only, so cheap on any file size. */
export function readMetadata(src: ByteSource): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of fieldsOf(src)) {
    if (f.field !== ModelField.METADATA_PROPS || f.wire !== WIRE_LEN) continue;
    const entry = bufferSource(src.read(f.offset, f.length));
    let key = '';
    let value = '';
    for (const g of fieldsOf(entry)) {
      if (g.field === 1) key = text(entry, g);
      else if (g.field === 2) value = text(entry, g);
    }
    out.set(key, value);
  }
  return out;
}

/** The metadata of an ONNX file; an unreadable file gives an empty map (the session load reports it better). */
export function readFileMetadata(file: string): Map<string, string> {
  let src: FileSource | undefined;
  try {
    src = new FileSource(file);
    return readMetadata(src);
  } catch {
    return new Map();
  } finally {
    src?.close();
  }
}

/**
 * A graph as read: its nodes (in graph order) and initializers by field, and every name in it. The
 * quantizer rewrites from it and the q8 audit bounds its integer MatMuls from it: one reading of a graph.
 */
export interface GraphIndex {
  fields: Field[];
  nodes: Map<Field, NodeInfo>;
  tensors: Map<string, TensorInfo>;
  tensorAt: Map<Field, TensorInfo>;
  /** Every name in the graph: new ones must not clash with any. */
  used: Set<string>;
  /** The graph's inputs and outputs. */
  graphIo: Set<string>;
  /** How many node inputs read each name. */
  uses: Map<string, number>;
}

export function indexGraph(src: ByteSource, fields: Field[]): GraphIndex {
  const g: GraphIndex = { fields, nodes: new Map(), tensors: new Map(), tensorAt: new Map(), used: new Set(), graphIo: new Set(), uses: new Map() };
  for (const f of fields) {
    if (f.field === GraphField.NODE) {
      const n = readNode(src, f);
      g.nodes.set(f, n);
      for (const i of n.inputs) g.uses.set(i, (g.uses.get(i) ?? 0) + 1);
      for (const name of [...n.inputs, ...n.outputs, n.name]) g.used.add(name);
    } else if (f.field === GraphField.INITIALIZER) {
      const t = readTensor(src, f);
      g.tensors.set(t.name, t);
      g.tensorAt.set(f, t);
      g.used.add(t.name);
    } else if (f.field === GraphField.INPUT || f.field === GraphField.OUTPUT) {
      // a ValueInfoProto: its name is field 1
      const name = stringFieldOf(src, f, 1);
      g.graphIo.add(name);
      g.used.add(name);
    }
  }
  return g;
}

import { MessageWriter, type Part } from './protobuf.js';

// Field numbers and enum values from onnx/onnx.proto (IR version 8, opset 17).

export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10 } as const;
export type DataTypeCode = (typeof DataType)[keyof typeof DataType];

const AttrType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7 } as const;

/** The ModelProto fields this package writes or rewrites. */
export const ModelField = { IR_VERSION: 1, PRODUCER_NAME: 2, PRODUCER_VERSION: 3, DOC_STRING: 6, GRAPH: 7, OPSET_IMPORT: 8, METADATA_PROPS: 14 } as const;
/** The GraphProto fields this package writes or rewrites. */
export const GraphField = { NODE: 1, NAME: 2, INITIALIZER: 5, INPUT: 11, OUTPUT: 12 } as const;

export const IR_VERSION = 8;
export const OPSET_VERSION = 17;

/** A node attribute value; plain numbers are INT unless wrapped with `floatAttr`. */
export type AttrValue = number | number[] | string | { float: number } | { floats: number[] };

export function floatAttr(value: number): { float: number } {
  return { float: value };
}

function attribute(name: string, value: AttrValue): MessageWriter {
  const m = new MessageWriter().string(1, name);
  if (typeof value === 'number') return m.varint(20, AttrType.INT).varint(3, value);
  if (typeof value === 'string') return m.varint(20, AttrType.STRING).string(4, value);
  if (Array.isArray(value)) return m.varint(20, AttrType.INTS).varints(8, value);
  if ('float' in value) return m.varint(20, AttrType.FLOAT).float32(2, value.float);
  for (const f of value.floats) m.float32(7, f);
  return m.varint(20, AttrType.FLOATS);
}

export function nodeProto(
  opType: string,
  inputs: readonly string[],
  outputs: readonly string[],
  name: string,
  attrs: Record<string, AttrValue> = {},
): MessageWriter {
  const m = new MessageWriter();
  for (const i of inputs) m.string(1, i);
  for (const o of outputs) m.string(2, o);
  m.string(3, name).string(4, opType);
  for (const [k, v] of Object.entries(attrs)) m.message(5, attribute(k, v));
  return m;
}

/** TensorProto with its content as little-endian raw_data (the form ONNX exporters use for weights). */
export function tensorProto(name: string, dataType: DataTypeCode, dims: readonly number[], raw: Part): MessageWriter {
  return new MessageWriter().varints(1, dims).varint(2, dataType).string(8, name).bytes(9, raw);
}

/** A dimension is fixed (number) or symbolic (string, e.g. "batch_size"). */
export function valueInfoProto(name: string, elemType: DataTypeCode, shape: readonly (number | string)[]): MessageWriter {
  const shapeMsg = new MessageWriter();
  for (const d of shape) {
    const dim = typeof d === 'number' ? new MessageWriter().varint(1, d) : new MessageWriter().string(2, d);
    shapeMsg.message(1, dim);
  }
  const tensorType = new MessageWriter().varint(1, elemType).message(2, shapeMsg);
  const typeProto = new MessageWriter().message(1, tensorType);
  return new MessageWriter().string(1, name).message(2, typeProto);
}

export interface GraphParts {
  name: string;
  nodes: MessageWriter[];
  initializers: MessageWriter[];
  inputs: MessageWriter[];
  outputs: MessageWriter[];
}

export function graphProto(g: GraphParts): MessageWriter {
  const m = new MessageWriter();
  for (const n of g.nodes) m.message(GraphField.NODE, n);
  m.string(GraphField.NAME, g.name);
  for (const t of g.initializers) m.message(GraphField.INITIALIZER, t);
  for (const i of g.inputs) m.message(GraphField.INPUT, i);
  for (const o of g.outputs) m.message(GraphField.OUTPUT, o);
  return m;
}

export function modelProto(graph: MessageWriter, producer: { name: string; version: string }, docString = ''): MessageWriter {
  const opset = new MessageWriter().string(1, '').varint(2, OPSET_VERSION);
  const m = new MessageWriter()
    .varint(ModelField.IR_VERSION, IR_VERSION)
    .string(ModelField.PRODUCER_NAME, producer.name)
    .string(ModelField.PRODUCER_VERSION, producer.version);
  if (docString) m.string(ModelField.DOC_STRING, docString);
  return m.message(ModelField.GRAPH, graph).message(ModelField.OPSET_IMPORT, opset);
}

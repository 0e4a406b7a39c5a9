import ort from 'onnxruntime-node';
import { DataType, graphProto, modelProto, nodeProto, valueInfoProto } from '../onnx-builder/onnx-proto.js';
import { messageToBytes } from '../onnx-builder/protobuf.js';

// A provider that fails to load is an answer here, not an error: ORT's own multi-line log is noise.
if (!process.env.TODEVAL_DEBUG) ort.env.logLevel = 'fatal';

/**
 * A two-input MatMul graph: small enough to build in memory, and a MatMul has a CUDA kernel (cuBLAS),
 * so creating and running it on the CUDA provider proves the provider, its libraries and the driver
 * work together — which file checks alone cannot.
 */
export function probeModelBytes(): Uint8Array {
  const graph = graphProto({
    name: 'todeval_probe',
    nodes: [nodeProto('MatMul', ['a', 'b'], ['y'], 'probe_matmul')],
    initializers: [],
    inputs: [valueInfoProto('a', DataType.FLOAT, [2, 2]), valueInfoProto('b', DataType.FLOAT, [2, 2])],
    outputs: [valueInfoProto('y', DataType.FLOAT, [2, 2])],
  });
  return messageToBytes(modelProto(graph, { name: 'todeval-probe', version: '1' }));
}

export interface ProbeResult {
  provider: 'cpu' | 'cuda';
  ok: boolean;
  /** First line of ORT's error when it did not load. */
  error?: string;
  ms?: number;
}

/** Creates a session on the provider and runs one MatMul, checking the answer. */
export async function probeProvider(provider: 'cpu' | 'cuda'): Promise<ProbeResult> {
  const t = performance.now();
  let session: ort.InferenceSession | undefined;
  try {
    session = await ort.InferenceSession.create(probeModelBytes(), { executionProviders: [provider], logSeverityLevel: 3 });
    const a = new ort.Tensor('float32', Float32Array.from([1, 2, 3, 4]), [2, 2]);
    const b = new ort.Tensor('float32', Float32Array.from([5, 6, 7, 8]), [2, 2]);
    const y = (await session.run({ a, b })).y.data as Float32Array;
    const want = [19, 22, 43, 50];
    if (!want.every((v, i) => Math.abs(y[i] - v) < 1e-4)) return { provider, ok: false, error: `wrong MatMul result [${Array.from(y).join(', ')}]` };
    return { provider, ok: true, ms: performance.now() - t };
  } catch (e) {
    return { provider, ok: false, error: String((e as Error)?.message ?? e).split('\n')[0].slice(0, 300) };
  } finally {
    await session?.release();
  }
}

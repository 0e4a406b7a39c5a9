import { InputError } from '../util/errors.js';

/**
 * q8: int8 with activations quantized per row and 7-bit weights (`todeval models quantize` builds
 * it from the fp32 export): a pair's score depends on the pair and the file only. q8-tensor: the
 * hub's model_quantized.onnx, ORT quantize_dynamic's per-tensor scheme, whose scores move with the
 * batch and the CPU. See docs/nli.md "q8".
 */
export type NliDtype = 'fp32' | 'fp16' | 'q8' | 'q8-tensor';
export const NLI_DTYPES: readonly NliDtype[] = ['fp32', 'fp16', 'q8', 'q8-tensor'];

export function parseDtype(value: string | undefined): NliDtype | undefined {
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  const alias: Record<string, NliDtype> = { fp32: 'fp32', float32: 'fp32', fp16: 'fp16', float16: 'fp16', q8: 'q8', int8: 'q8', quantized: 'q8', 'q8-tensor': 'q8-tensor' };
  const d = alias[v];
  if (!d) throw new InputError(`unknown dtype "${value}" (use fp32, fp16, q8 or q8-tensor)`);
  return d;
}

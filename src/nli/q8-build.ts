import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { InputError, MissingResourceError } from '../util/errors.js';
import { resolveModel, loadDefaultManifest } from './model-store.js';
import { quantizeOnnxFile, type QuantizeResult } from './onnx-builder/quantize.js';

export interface Q8BuildResult extends QuantizeResult {
  from: string;
  out: string;
}

/**
 * The row-scheme q8 file of a model (hub id or directory), built from its fp32 export and written
 * beside it as onnx/model_q8_row.onnx (or to `out`, the command's --output), where `--dtype q8` finds it. The fp32 file must
 * be present: `todeval models pull` fetches it.
 */
export function buildQ8(spec: string | undefined, out?: string, env: NodeJS.ProcessEnv = process.env): Q8BuildResult {
  const fp32 = resolveModel(spec, 'fp32', env);
  const target = path.resolve(out ?? path.join(fp32.dir, loadDefaultManifest().dtypes.q8.onnx));
  if (sameFile(fp32.onnxPath, target)) throw new InputError(`--output ${target} is the fp32 file itself; give another path`);
  mkdirSync(path.dirname(target), { recursive: true });
  if (!existsSync(fp32.onnxPath)) throw new MissingResourceError(`no fp32 ONNX file at ${fp32.onnxPath}`);
  return { ...quantizeOnnxFile(fp32.onnxPath, target, 'row'), from: fp32.onnxPath, out: target };
}

/**
 * Whether two paths name one file, by what they lead to rather than how they are spelled: the
 * model folder reached through a symbolic link, the hub cache's blob behind its snapshot link, a
 * link at -o. The build renames its output over the file a link leads to, so an -o that was the
 * fp32 file by another path replaced the export it was read from. By path when either is absent.
 */
function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return path.resolve(a) === path.resolve(b);
  }
}

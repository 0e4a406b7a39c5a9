import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MissingResourceError } from '../util/errors.js';
import { readPackageJson } from '../util/package-file.js';
import { filesStamp, StampedFileCache, userCacheDir } from '../util/stamped-cache.js';
import type { NliModelSignature } from './types.js';
import { modelFamily } from './family.js';
import { pairEncodingOf } from './pair-encoding.js';
import { localModelId } from './onnx-builder/standins.js';
import { readFileMetadata } from './onnx-builder/onnx-reader.js';
import { Q8_ROW_GRAPH, Q8_ROW_GRAPH_KEY, Q8_SCHEME_KEY } from './onnx-builder/quantize.js';
import { NLI_DTYPES, type NliDtype } from './dtype.js';

// The dtypes and their flag parsing live in dtype.ts (every command taking --dtype parses it, and
// evaluate without --sgsacc needs nothing else of this module's 20 imported modules); exported here as before.
export { NLI_DTYPES, parseDtype, type NliDtype } from './dtype.js';

/**
 * What signatures call each int8 scheme, so runs under two schemes never compare equal: the row
 * scheme by its graph version (q8-row2 writes Softmax out in primitive ops, docs/nli.md "q8 across
 * CPUs"; q8-row is a file from before, still loaded, never equal to the new one).
 */
export const Q8_SIGNATURE_DTYPE = { row: 'q8-row2', rowV1: 'q8-row', tensor: 'q8-tensor' } as const;

/**
 * The signature's dtype for an ONNX file loaded as `dtype`: int8 files name their scheme, read from
 * the metadata quantize.ts writes; any other int8 file (the hub's, onnxruntime's quantize_dynamic)
 * is the per-tensor scheme.
 */
export function signatureDtype(onnxPath: string, dtype: NliDtype): string {
  if (dtype !== 'q8' && dtype !== 'q8-tensor') return dtype;
  const meta = readFileMetadata(onnxPath);
  if (meta.get(Q8_SCHEME_KEY) !== 'row') return Q8_SIGNATURE_DTYPE.tensor;
  return meta.get(Q8_ROW_GRAPH_KEY) === String(Q8_ROW_GRAPH) ? Q8_SIGNATURE_DTYPE.row : Q8_SIGNATURE_DTYPE.rowV1;
}

export interface ModelManifest {
  id: string;
  revision: string;
  /** Files every snapshot must hold beside the ONNX file. */
  common: string[];
  /** Files fetched when the repository has them (a hub export may lack tokenizer_config.json). */
  optional?: string[];
  /**
   * builtFrom: not on the hub; `models pull` downloads that dtype and builds this file from it.
   * alternates: other places hub exports put the same file, tried after `onnx` in order.
   */
  dtypes: Record<NliDtype, { onnx: string; approxBytes?: number; builtFrom?: NliDtype; alternates?: string[] }>;
  maxLength?: number;
}

export interface ResolvedModel {
  dir: string;
  onnxPath: string;
  tokenizerPath: string;
  /** tokenizer_config.json when present (model_max_length); optional for local exports. */
  tokenizerConfigPath?: string;
  configPath: string;
  signature: NliModelSignature;
  source: 'local' | 'hub-cache';
}

export function loadDefaultManifest(): ModelManifest {
  return readPackageJson<ModelManifest>('models', 'roberta-large-mnli.json');
}

export const DEFAULT_MODEL_ID = 'Xenova/roberta-large-mnli';


/**
 * The Hugging Face hub cache, with huggingface_hub's precedence: $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE,
 * $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub.
 */
export function hubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HUGGINGFACE_HUB_CACHE) return env.HUGGINGFACE_HUB_CACHE;
  if (env.HF_HOME) return path.join(env.HF_HOME, 'hub');
  return path.join(userCacheDir(env, 'huggingface'), 'hub');
}

/** A full git commit id: the hub cache keeps snapshots under it, and a branch or tag resolves to one via refs/. */
export function isCommitSha(revision: string): boolean {
  return /^[0-9a-f]{40}$/.test(revision);
}

export function repoCacheFolder(cacheDir: string, id: string): string {
  return path.join(cacheDir, `models--${id.split('/').join('--')}`);
}

/**
 * Manifest for a hub id: ours for the default model; for any other, the layouts hub exports use.
 * transformers.js and sentence-transformers put the files under onnx/ (model.onnx,
 * model_fp16.onnx, model_quantized.onnx), optimum's exports at the root; config.json and
 * tokenizer.json are needed, tokenizer_config.json is taken when there. The q8 row file is built
 * into onnx/ whichever layout the fp32 file came in, where `--dtype q8` looks first.
 */
export function manifestFor(id: string): ModelManifest {
  const m = loadDefaultManifest();
  if (id === m.id) return m;
  const dtypes = Object.fromEntries(
    NLI_DTYPES.map((d) => {
      // Sizes are the default model's: not carried over.
      const { onnx, builtFrom } = m.dtypes[d];
      return [d, builtFrom ? { onnx, builtFrom } : { onnx, alternates: [path.basename(onnx)] }];
    }),
  ) as ModelManifest['dtypes'];
  return { ...m, id, revision: 'main', common: ['config.json', 'tokenizer.json'], optional: ['tokenizer_config.json'], dtypes };
}

/** Where `dtype`'s ONNX file may be in a snapshot of the manifest's repository, in the order tried. */
export function onnxCandidates(manifest: ModelManifest, dtype: NliDtype): string[] {
  const e = manifest.dtypes[dtype];
  return [e.onnx, ...(e.alternates ?? [])];
}

export function pullCommand(dtype: NliDtype, id: string = DEFAULT_MODEL_ID): string {
  return `todeval models pull${id === DEFAULT_MODEL_ID ? '' : ` --model ${id}`} --dtype ${dtype}`;
}

function looksLikePath(spec: string): boolean {
  return spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('~') || existsSync(spec);
}

/**
 * Where the model files are: `--model` (hub id or local directory), else $TODEVAL_MODEL, else the
 * default hub id, looked up in the Hugging Face cache. Nothing is downloaded here: a missing model
 * is a one-line error naming the pull command.
 */
export function resolveModel(spec?: string, dtype?: NliDtype, env: NodeJS.ProcessEnv = process.env): ResolvedModel {
  const chosen = spec || env.TODEVAL_MODEL || DEFAULT_MODEL_ID;
  if (looksLikePath(chosen)) return resolveLocalDir(chosen.replace(/^~(?=$|\/)/, os.homedir()), dtype);
  const [id, pinned] = chosen.split('@');
  if (!/^[\w.-]+\/[\w.-]+$/.test(id)) {
    throw new MissingResourceError(`--model "${chosen}" is neither a directory nor a hub id like ${DEFAULT_MODEL_ID}`);
  }
  return resolveHubCache(id, pinned, dtype ?? 'fp32', hubCacheDir(env));
}

function resolveHubCache(id: string, pinned: string | undefined, dtype: NliDtype, cacheDir: string): ResolvedModel {
  const manifest = manifestFor(id);
  const revision = pinned ?? manifest.revision;
  const folder = repoCacheFolder(cacheDir, id);
  const hint = `run \`${pullCommand(dtype, id)}\` or pass --model <dir>`;
  let commit = revision;
  if (!isCommitSha(revision)) {
    const ref = path.join(folder, 'refs', revision);
    if (!existsSync(ref)) {
      throw new MissingResourceError(`model ${id} (${dtype}) is not downloaded (no ${ref}); ${hint}`);
    }
    commit = readFileSync(ref, 'utf8').trim();
  }
  const dir = path.join(folder, 'snapshots', commit);
  const present = (d: NliDtype) => onnxCandidates(manifest, d).find((f) => existsSync(path.join(dir, f)));
  // q8 without the row-scheme file: the hub's per-tensor file still loads, and the signature says so.
  const onnx = present(dtype) ?? (dtype === 'q8' ? present('q8-tensor') : undefined);
  const missing = manifest.common.filter((f) => !existsSync(path.join(dir, f)));
  if (onnx === undefined) missing.unshift(onnxCandidates(manifest, dtype).join(' or '));
  if (missing.length > 0) {
    throw new MissingResourceError(`model ${id} (${dtype}) is incomplete: missing ${missing.join(', ')} in ${dir}; ${hint}`);
  }
  const onnxPath = path.join(dir, onnx!);
  const tokCfg = path.join(dir, 'tokenizer_config.json');
  return {
    dir,
    onnxPath,
    tokenizerPath: path.join(dir, 'tokenizer.json'),
    tokenizerConfigPath: manifest.common.includes('tokenizer_config.json') || existsSync(tokCfg) ? tokCfg : undefined,
    configPath: path.join(dir, 'config.json'),
    signature: { modelId: id, revision: commit, dtype: signatureDtype(onnxPath, dtype) },
    source: 'hub-cache',
  };
}

function dtypeOfFile(file: string): NliDtype {
  const base = path.basename(file);
  if (/fp16|float16/.test(base)) return 'fp16';
  if (/quant|int8|q8|uint8/.test(base)) return 'q8';
  return 'fp32';
}

/** The ONNX file of a local export: model.onnx, or onnx/<name for the dtype>, or the single onnx/*.onnx. */
function pickOnnx(dir: string, dtype: NliDtype | undefined): string | undefined {
  const manifest = loadDefaultManifest();
  const candidates: string[] = [];
  for (const sub of ['.', 'onnx']) {
    const d = path.join(dir, sub);
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d).sort()) if (f.endsWith('.onnx')) candidates.push(path.join(d, f));
  }
  if (candidates.length === 0) return undefined;
  if (dtype) {
    // q8 prefers the row-scheme file, then the per-tensor one (loaded, and named so in signatures).
    const wanted: NliDtype[] = dtype === 'q8' ? ['q8', 'q8-tensor'] : [dtype];
    const named = [path.join(dir, 'model.onnx'), ...wanted.map((d) => path.join(dir, manifest.dtypes[d].onnx))];
    const family = (d: NliDtype): NliDtype => (d === 'q8-tensor' ? 'q8' : d);
    const rowFile = path.join(dir, manifest.dtypes.q8.onnx);
    const fits = (c: string) => family(dtypeOfFile(c)) === family(dtype) && !(dtype === 'q8-tensor' && c === rowFile);
    for (const n of named) if (candidates.includes(n) && fits(n)) return n;
    const match = candidates.filter(fits);
    return match.length > 0 ? match[0] : undefined;
  }
  for (const n of [path.join(dir, 'model.onnx'), path.join(dir, 'onnx', 'model.onnx')]) if (candidates.includes(n)) return n;
  return candidates.length === 1 ? candidates[0] : undefined;
}

function resolveLocalDir(dirSpec: string, dtype: NliDtype | undefined): ResolvedModel {
  const dir = path.resolve(dirSpec);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    // A file (often the .onnx itself) is a common slip: say so rather than "does not exist".
    const what = existsSync(dir) ? 'is a file, not a model directory' : 'does not exist';
    throw new MissingResourceError(`model directory ${dir} ${what}; pass --model <dir> holding model.onnx, tokenizer.json and config.json, or run \`${pullCommand(dtype ?? 'fp32')}\``);
  }
  const onnxPath = pickOnnx(dir, dtype);
  if (!onnxPath) {
    throw new MissingResourceError(
      `model directory ${dir} has no ${dtype ? `${dtype} ` : ''}ONNX file (expected model.onnx or onnx/*.onnx)`,
    );
  }
  for (const f of ['tokenizer.json', 'config.json']) {
    if (!existsSync(path.join(dir, f))) throw new MissingResourceError(`model directory ${dir} lacks ${f}`);
  }
  const tokCfg = path.join(dir, 'tokenizer_config.json');
  const modelId = localModelId(dir);
  return {
    dir,
    onnxPath,
    tokenizerPath: path.join(dir, 'tokenizer.json'),
    tokenizerConfigPath: existsSync(tokCfg) ? tokCfg : undefined,
    configPath: path.join(dir, 'config.json'),
    // The revision of a local export is its content: filled in by fileDigest() before use.
    signature: { modelId, revision: '', dtype: signatureDtype(onnxPath, dtype ?? dtypeOfFile(onnxPath)) },
    source: 'local',
  };
}

/**
 * First 16 hex digits of the ONNX file's sha256: the revision of a local export. Hashing 1.4 GB
 * takes seconds, so the digest is remembered per (path, size, mtime) in the user cache.
 */
export async function fileDigest(file: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const real = realpathSync(file);
  // The files still there, and the 256 hashed last (a user rarely scores with more models than that).
  const memo = new StampedFileCache(path.join(userCacheDir(env), 'onnx-digests.json'), { maxEntries: 256, keep: (f) => existsSync(f) });
  return memo.get(real, filesStamp([real])!, async () => {
    const hash = createHash('sha256');
    await new Promise<void>((resolve, reject) => {
      createReadStream(real)
        .on('data', (c) => hash.update(c))
        .on('end', () => resolve())
        .on('error', reject);
    });
    return hash.digest('hex').slice(0, 16);
  });
}

/** resolveModel plus the content digest for local exports, so the signature is complete. */
export async function resolveModelWithSignature(spec?: string, dtype?: NliDtype, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedModel> {
  const m = resolveModel(spec, dtype, env);
  if (m.source === 'local') m.signature = { ...m.signature, revision: `sha256:${await fileDigest(m.onnxPath, env)}` };
  return m;
}

export interface PresentModel {
  id: string;
  revision: string;
  dtypes: NliDtype[];
  dir: string;
  bytes: number;
  /** config.json's model_type (family.ts); "unknown" without one. */
  family: string;
  /** The pair template its tokenizer.json defines, or why it cannot be read. */
  pairEncoding: string;
  /** The signature dtype of its row-scheme q8 file, where it has one: q8-row2, or q8-row for a file built before. */
  q8Row?: string;
}

/**
 * A model directory's family and pair encoding, as the runner would read them (doctor and
 * `models list` name them, so a user sees which encoding a model will get before scoring with it).
 */
export function describeModelDir(dir: string): { family: string; pairEncoding: string } {
  let family = 'unknown';
  try {
    family = modelFamily(JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>);
  } catch {
    // no readable config.json: the runner refuses it when used
  }
  let pairEncoding: string;
  try {
    const tok = JSON.parse(readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')) as { added_tokens?: { id: number; content: string }[]; model?: { vocab?: unknown } };
    const vocab = tok.model?.vocab && !Array.isArray(tok.model.vocab) ? (tok.model.vocab as Record<string, number>) : {};
    const added = new Map((tok.added_tokens ?? []).map((t) => [t.content, t.id]));
    pairEncoding = pairEncodingOf(tok, (t) => added.get(t) ?? vocab[t]).template;
  } catch (e) {
    pairEncoding = `unreadable (${(e as Error).message.split('\n')[0]})`;
  }
  return { family, pairEncoding };
}

/** What `todeval models list` shows: each cached snapshot of a known model and the dtypes it holds. */
export function listCachedModels(cacheDir = hubCacheDir()): PresentModel[] {
  const out: PresentModel[] = [];
  if (!existsSync(cacheDir)) return out;
  for (const entry of readdirSync(cacheDir).sort()) {
    if (!entry.startsWith('models--')) continue;
    const id = entry.slice('models--'.length).split('--').join('/');
    const manifest = manifestFor(id);
    const snaps = path.join(cacheDir, entry, 'snapshots');
    if (!existsSync(snaps)) continue;
    for (const rev of readdirSync(snaps).sort()) {
      const dir = path.join(snaps, rev);
      const files = new Map<NliDtype, string>();
      for (const d of NLI_DTYPES) {
        const f = onnxCandidates(manifest, d).find((c) => existsSync(path.join(dir, c)));
        if (f !== undefined) files.set(d, f);
      }
      const dtypes = [...files.keys()];
      if (dtypes.length === 0 || !existsSync(path.join(dir, 'tokenizer.json'))) continue;
      const bytes = [...files.values()].reduce((s, f) => s + statSync(path.join(dir, f)).size, 0);
      const q8File = files.get('q8');
      const q8Row = q8File !== undefined ? signatureDtype(path.join(dir, q8File), 'q8') : undefined;
      out.push({ id, revision: rev, dtypes, dir, bytes, ...describeModelDir(dir), ...(q8Row ? { q8Row } : {}) });
    }
  }
  return out;
}

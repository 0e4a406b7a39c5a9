import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TODEVAL_VERSION } from '../../util/version.js';
import { MissingResourceError } from '../../util/errors.js';
import { packageFile } from '../../util/package-file.js';
import { labelIndexFromConfig, type LabelIndex } from '../labels.js';
import { writeMessageToFile, type MessageWriter } from './protobuf.js';
import {
  applyOverrides,
  configWithSizes,
  readConfigFile,
  ROBERTA_LARGE_MNLI_CONFIG,
  sizesFromConfig,
  TINY_OVERRIDES,
  type RobertaSizes,
  type SizeOverrides,
} from './roberta-config.js';
import { buildRobertaModel, type WeightDtype } from './roberta-graph.js';
import { quantizeOnnxFile } from './quantize.js';
import { countParameters } from './roberta-weights.js';

/**
 * Bump whenever the graph or the weight generation changes: caches of built models are keyed by it,
 * and it goes into random-model.json so signatures tell builds apart.
 */
export const ONNX_BUILDER_VERSION = '4';

export const DEFAULT_SEED = 42;
export const DEFAULT_STD = 0.02;
export const RANDOM_MODEL_MANIFEST = 'random-model.json';

/** Tokenizer files copied next to the model; tokenizer.json is the one the runner needs. */
const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'vocab.json', 'merges.txt', 'special_tokens_map.json'];

export type ModelSize = 'tiny' | 'large';

export interface BuildRandomRobertaOptions {
  outDir: string;
  size: ModelSize;
  /** Where tokenizer.json (and config.json, unless `configFile`) come from; default: the shipped roberta-large-mnli (models/). */
  tokenizerDir?: string;
  /** Base config.json; default: tokenizerDir/config.json, else the built-in roberta-large-mnli config. */
  configFile?: string;
  seed?: number;
  /** Applied after the size preset. */
  overrides?: SizeOverrides;
  std?: number;
  dtype?: WeightDtype;
}

/** What random-model.json holds: enough for a runner to name the model "random" in signatures. */
export interface RandomModelManifest {
  kind: 'random-roberta';
  builderVersion: string;
  producer: string;
  size: ModelSize;
  seed: number;
  std: number;
  dtype: WeightDtype;
  sizes: RobertaSizes;
  parameters: number;
  onnxFile: string;
  bytes: number;
  sha256: string;
}

/**
 * roberta-large-mnli's tokenizer.json, tokenizer_config.json and config.json ship with the package
 * (models/roberta-large-mnli, MIT, origin in ORIGIN.md there), so the builders work in a fresh clone
 * or an installed package with nothing beside it; `--tokenizer-dir` overrides.
 */
export const SHIPPED_TOKENIZER_PARTS = ['models', 'roberta-large-mnli'] as const;

/** The shipped tokenizer directory (a missing one is a broken installation, not a user error). */
export function shippedTokenizerDir(): string {
  return path.dirname(packageFile(...SHIPPED_TOKENIZER_PARTS, 'tokenizer.json'));
}

/** `explicit` (a --tokenizer-dir) when given, else the shipped tokenizer; it must hold tokenizer.json. */
export function resolveTokenizerDir(explicit?: string): string {
  if (!explicit) return shippedTokenizerDir();
  const dir = path.resolve(explicit);
  if (!existsSync(path.join(dir, 'tokenizer.json'))) {
    throw new MissingResourceError(
      `--tokenizer-dir ${explicit} holds no tokenizer.json; give a directory with roberta-large-mnli's tokenizer.json, or leave the flag out to use the one shipped in models/roberta-large-mnli`,
    );
  }
  return dir;
}

/** The tokenizer files present in `from`, copied next to a built model. */
export function copyTokenizerFiles(from: string, outDir: string): void {
  for (const f of TOKENIZER_FILES) {
    const src = path.join(from, f);
    if (!existsSync(src)) continue;
    const dest = path.join(outDir, f);
    copyFileSync(src, dest);
    chmodSync(dest, 0o644); // sources may be read-only; a rebuild must be able to overwrite the copy
  }
}

/**
 * A stand-in's base config: config.json of the tokenizer directory (else roberta-large-mnli's) and
 * the label order it gives, in which the stand-in's graph writes its logit columns (the runner reads
 * the same order from id2label).
 */
export function standinBaseConfig(tokenizerDir: string): { base: Record<string, unknown>; order: LabelIndex } {
  const configFile = path.join(tokenizerDir, 'config.json');
  const base = existsSync(configFile) ? readConfigFile(configFile) : ROBERTA_LARGE_MNLI_CONFIG;
  return { base, order: labelIndexFromConfig(base, configFile) };
}

/** What every stand-in's manifest holds: what it is, which build, and the ONNX file written. */
export interface StandinManifest<K extends string> {
  kind: K;
  builderVersion: string;
  producer: string;
  /** Slash-separated, relative to the model directory. */
  onnxFile: string;
  bytes: number;
  sha256: string;
}

export interface StandinBuild<K extends string, D extends object> {
  kind: K;
  /** The stand-in's build version: in its manifest and in the ONNX file's producer version. */
  version: string;
  manifestFile: string;
  outDir: string;
  tokenizerDir: string;
  /** The graph, given the producer version it records. */
  model: (producerVersion: string) => MessageWriter;
  /** config.json. No RoBERTa architecture in it: a config that said so would make the directory pass for a real model. */
  config: Record<string, unknown>;
  /** What the manifest says of this stand-in, between its build and its file. */
  details: D;
}

/**
 * Writes a stand-in's model directory in the hub layout (onnx/model.onnx, the real tokenizer, its
 * config.json), which `--model DIR` loads like the real export; the manifest last, as its presence
 * marks a complete directory. Returns the manifest.
 */
export function writeStandinDir<K extends string, D extends object>(b: StandinBuild<K, D>): StandinManifest<K> & D {
  const onnxFile = path.join('onnx', 'model.onnx');
  mkdirSync(path.join(b.outDir, 'onnx'), { recursive: true });
  const written = writeMessageToFile(b.model(`${TODEVAL_VERSION}+${b.kind}${b.version}`), path.join(b.outDir, onnxFile));
  copyTokenizerFiles(b.tokenizerDir, b.outDir);
  writeFileSync(path.join(b.outDir, 'config.json'), JSON.stringify(b.config, null, 2) + '\n');
  const manifest = {
    kind: b.kind,
    builderVersion: b.version,
    producer: `todeval ${TODEVAL_VERSION}`,
    ...b.details,
    onnxFile: onnxFile.split(path.sep).join('/'),
    bytes: written.bytes,
    sha256: written.sha256,
  };
  writeFileSync(path.join(b.outDir, b.manifestFile), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

export function onnxFileName(dtype: WeightDtype): string {
  // Same layout as the hub export (Xenova/roberta-large-mnli): onnx/model.onnx, onnx/model_fp16.onnx,
  // onnx/model_quantized.onnx (the per-tensor q8 scheme), plus our row-scheme q8 file beside them
  // (not on the hub: `todeval models quantize` and the random builder write it).
  if (dtype === 'fp16') return path.join('onnx', 'model_fp16.onnx');
  if (dtype === 'q8-tensor') return path.join('onnx', 'model_quantized.onnx');
  if (dtype === 'q8') return path.join('onnx', 'model_q8_row.onnx');
  return path.join('onnx', 'model.onnx');
}

/** Writes a complete model directory (ONNX + tokenizer + config + random-model.json); returns its manifest. */
export function buildRandomRoberta(opts: BuildRandomRobertaOptions): RandomModelManifest {
  const tokenizerDir = resolveTokenizerDir(opts.tokenizerDir);
  const configFile = opts.configFile ?? path.join(tokenizerDir, 'config.json');
  const baseConfig = opts.configFile || existsSync(configFile) ? readConfigFile(configFile) : ROBERTA_LARGE_MNLI_CONFIG;
  const preset = opts.size === 'tiny' ? TINY_OVERRIDES : {};
  const given = Object.fromEntries(Object.entries(opts.overrides ?? {}).filter(([, v]) => v !== undefined));
  const sizes = applyOverrides(sizesFromConfig(baseConfig, configFile), { ...preset, ...given });
  const seed = opts.seed ?? DEFAULT_SEED;
  const std = opts.std ?? DEFAULT_STD;
  const dtype = opts.dtype ?? 'fp32';

  const onnxFile = onnxFileName(dtype);
  mkdirSync(path.join(opts.outDir, path.dirname(onnxFile)), { recursive: true });
  const producerVersion = `${TODEVAL_VERSION}+builder${ONNX_BUILDER_VERSION}`;
  let written: { sha256: string; bytes: number };
  if (dtype === 'fp32' || dtype === 'fp16') {
    written = writeMessageToFile(buildRobertaModel(sizes, { seed, std, dtype, producerVersion }), path.join(opts.outDir, onnxFile));
  } else {
    // The int8 files come from the fp32 graph through the same quantizer as any fp32 export
    // (`todeval models quantize`), so what the tests check of one holds for the other.
    const fp32 = path.join(opts.outDir, 'onnx', `.fp32-for-${dtype}-${process.pid}.onnx`);
    try {
      writeMessageToFile(buildRobertaModel(sizes, { seed, std, dtype: 'fp32', producerVersion }), fp32);
      written = quantizeOnnxFile(fp32, path.join(opts.outDir, onnxFile), dtype === 'q8' ? 'row' : 'tensor');
    } finally {
      rmSync(fp32, { force: true });
    }
  }

  copyTokenizerFiles(tokenizerDir, opts.outDir);
  writeFileSync(path.join(opts.outDir, 'config.json'), JSON.stringify(configWithSizes(baseConfig, sizes), null, 2) + '\n');

  const manifest: RandomModelManifest = {
    kind: 'random-roberta',
    builderVersion: ONNX_BUILDER_VERSION,
    producer: `todeval ${TODEVAL_VERSION}`,
    size: opts.size,
    seed,
    std,
    dtype,
    sizes,
    parameters: countParameters(sizes),
    onnxFile: onnxFile.split(path.sep).join('/'),
    bytes: written.bytes,
    sha256: written.sha256,
  };
  // Written last: its presence marks a complete directory.
  writeFileSync(path.join(opts.outDir, RANDOM_MODEL_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

/** The interface colleagues' tests use: build a model directory, return its path. */
export async function buildRandomRobertaModelDir(opts: {
  outDir: string;
  size: ModelSize;
  tokenizerDir?: string;
  seed?: number;
}): Promise<string> {
  buildRandomRoberta(opts);
  return opts.outDir;
}

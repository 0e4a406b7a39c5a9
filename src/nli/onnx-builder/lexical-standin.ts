import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TODEVAL_VERSION } from '../../version.js';
import { readJsonFile } from '../../util/json-file.js';
import { labelIndexFromConfig } from '../labels.js';
import { buildLexicalModel, DEFAULT_LEXICAL_DECISION, type LexicalDecision } from './lexical-graph.js';
import { lexicalTables, LEXICAL_NEGATION_WORDS, LEXICAL_STOP_WORDS } from './lexical-vocab.js';
import { copyTokenizerFiles, resolveTokenizerDir } from './model-dir.js';
import { writeMessageToFile } from './protobuf.js';
import { readConfigFile, ROBERTA_LARGE_MNLI_CONFIG } from './roberta-config.js';

/** What the stand-in is called everywhere: model ids, file names, notices. */
export const LEXICAL_STANDIN = 'lexical-standin';
/** Written last into the model directory: marks it complete and tells the model store what it is. */
export const LEXICAL_STANDIN_MANIFEST = 'lexical-standin.json';
/** Bump whenever the graph or the tables change: cached builds are keyed by it. */
export const LEXICAL_STANDIN_VERSION = '1';

export interface LexicalStandinManifest {
  kind: typeof LEXICAL_STANDIN;
  builderVersion: string;
  producer: string;
  decision: LexicalDecision;
  stopWords: readonly string[];
  negationWords: readonly string[];
  vocabSize: number;
  words: number;
  onnxFile: string;
  bytes: number;
  sha256: string;
}

export interface BuildLexicalStandinOptions {
  outDir: string;
  /** Where tokenizer.json and config.json come from; default: the shipped roberta-large-mnli (models/). */
  tokenizerDir?: string;
  decision?: Partial<LexicalDecision>;
}

interface TokenizerJson {
  model?: { vocab?: Record<string, number> };
  added_tokens?: { id: number; content: string; special?: boolean }[];
}

/**
 * Writes a model directory in the hub layout (onnx/model.onnx, the real tokenizer, a config.json
 * naming the stand-in) that `--model DIR` loads like the real export. Returns the manifest.
 */
export function buildLexicalStandin(opts: BuildLexicalStandinOptions): LexicalStandinManifest {
  const tokenizerDir = resolveTokenizerDir(opts.tokenizerDir);
  const tokenizerFile = path.join(tokenizerDir, 'tokenizer.json');
  const tok = readJsonFile<TokenizerJson>(tokenizerFile);
  const vocab = tok.model?.vocab;
  if (!vocab || typeof vocab !== 'object') throw new Error(`${tokenizerFile} has no model.vocab: not a BPE tokenizer`);
  const special = (tok.added_tokens ?? []).filter((t) => t.special !== false);
  const sep = special.find((t) => t.content === '</s>')?.id ?? vocab['</s>'];
  if (sep === undefined) throw new Error(`${tokenizerFile} has no </s> token: not a RoBERTa tokenizer`);
  const tables = lexicalTables(vocab, special.map((t) => t.id));

  const configFile = path.join(tokenizerDir, 'config.json');
  const base = existsSync(configFile) ? readConfigFile(configFile) : ROBERTA_LARGE_MNLI_CONFIG;
  // The runner reads the label order from id2label; the graph writes its columns in that order.
  const order = labelIndexFromConfig(base, configFile);
  const decision = { ...DEFAULT_LEXICAL_DECISION, ...opts.decision };

  const onnxFile = path.join('onnx', 'model.onnx');
  mkdirSync(path.join(opts.outDir, 'onnx'), { recursive: true });
  const model = buildLexicalModel(tables, { sep }, order, decision, `${TODEVAL_VERSION}+${LEXICAL_STANDIN}${LEXICAL_STANDIN_VERSION}`);
  const written = writeMessageToFile(model, path.join(opts.outDir, onnxFile));

  copyTokenizerFiles(tokenizerDir, opts.outDir);
  // No RoBERTa architecture here: a config that said so would make the directory pass for a real model.
  const config = { ...base, architectures: ['LexicalOverlapStandin'], todeval_standin: LEXICAL_STANDIN, vocab_size: tables.canon.length };
  writeFileSync(path.join(opts.outDir, 'config.json'), JSON.stringify(config, null, 2) + '\n');

  const manifest: LexicalStandinManifest = {
    kind: LEXICAL_STANDIN,
    builderVersion: LEXICAL_STANDIN_VERSION,
    producer: `todeval ${TODEVAL_VERSION}`,
    decision,
    stopWords: LEXICAL_STOP_WORDS,
    negationWords: LEXICAL_NEGATION_WORDS,
    vocabSize: tables.canon.length,
    words: tables.words,
    onnxFile: onnxFile.split(path.sep).join('/'),
    bytes: written.bytes,
    sha256: written.sha256,
  };
  writeFileSync(path.join(opts.outDir, LEXICAL_STANDIN_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

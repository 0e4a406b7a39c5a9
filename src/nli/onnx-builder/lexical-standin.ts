import path from 'node:path';
import { readJsonFile } from '../../util/json-file.js';
import { buildLexicalModel, DEFAULT_LEXICAL_DECISION, type LexicalDecision } from './lexical-graph.js';
import { lexicalTables, LEXICAL_NEGATION_WORDS, LEXICAL_STOP_WORDS } from './lexical-vocab.js';
import { resolveTokenizerDir, standinBaseConfig, writeStandinDir, type StandinManifest } from './model-dir.js';

/** What the stand-in is called everywhere: model ids, file names, notices. */
export const LEXICAL_STANDIN = 'lexical-standin';
/** Written last into the model directory: marks it complete and tells the model store what it is. */
export const LEXICAL_STANDIN_MANIFEST = 'lexical-standin.json';
/** Bump whenever the graph or the tables change: cached builds are keyed by it. */
export const LEXICAL_STANDIN_VERSION = '1';

export interface LexicalStandinManifest extends StandinManifest<typeof LEXICAL_STANDIN> {
  decision: LexicalDecision;
  stopWords: readonly string[];
  negationWords: readonly string[];
  vocabSize: number;
  words: number;
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

  const { base, order } = standinBaseConfig(tokenizerDir);
  const decision = { ...DEFAULT_LEXICAL_DECISION, ...opts.decision };
  return writeStandinDir({
    kind: LEXICAL_STANDIN,
    version: LEXICAL_STANDIN_VERSION,
    manifestFile: LEXICAL_STANDIN_MANIFEST,
    outDir: opts.outDir,
    tokenizerDir,
    model: (producerVersion) => buildLexicalModel(tables, { sep }, order, decision, producerVersion),
    config: { ...base, architectures: ['LexicalOverlapStandin'], todeval_standin: LEXICAL_STANDIN, vocab_size: tables.canon.length },
    details: {
      decision,
      stopWords: LEXICAL_STOP_WORDS,
      negationWords: LEXICAL_NEGATION_WORDS,
      vocabSize: tables.canon.length,
      words: tables.words,
    },
  });
}

import type { Command } from 'commander';

/** Each CLI command lives in its own module and registers itself on the root program. */
export type RegisterCommand = (program: Command) => void;

/**
 * A command as the root program knows it before its module is loaded: how it is typed, the line
 * `todeval --help` shows for it, and how to load it. A run imports the module of the command it
 * runs and no other (a text metric never loads ONNX Runtime, Fastify or Vega; `--help` loads none),
 * which is most of the CLI's start. The term and description are the module's own, written out so
 * the root help needs no module: test/unit/cli-commands.test.ts checks them against the modules.
 */
export interface CommandEntry {
  name: string;
  aliases: readonly string[];
  /** What the root help shows in the command column: name|alias [options] <arguments>. */
  term: string;
  description: string;
  load: () => Promise<RegisterCommand>;
}

// One line per command module; keep this list sorted by command name (the root help's order).
export const COMMANDS: readonly CommandEntry[] = [
  { name: "bleu", aliases: [], term: "bleu [options] [refs...]", description: "sacreBLEU's BLEU, chrF/chrF++ and TER of plain-text system outputs, with its statistical tests (paired bootstrap, approximate randomization, confidence); takes sacreBLEU's command line for local files, printed todeval's way (todeval sacrebleu prints what sacreBLEU prints)", load: async () => (await import('./bleu.js')).register },
  { name: "compare", aliases: [], term: "compare [options] <runs...>", description: "paired significance tests of systems against a baseline on every metric of the runs' per-item outputs (sacreBLEU's tests; no model is re-run)", load: async () => (await import('./compare.js')).register },
  { name: "data", aliases: [], term: "data", description: "download the public datasets (SGD, MultiWOZ, GCDF1)", load: async () => (await import('./data.js')).register },
  { name: "doctor", aliases: [], term: "doctor [options]", description: "check Node, onnxruntime-node, the CPU/CUDA execution providers (tried for real), CUDA libraries, models and data", load: async () => (await import('./doctor.js')).register },
  { name: "evaluate", aliases: [], term: "evaluate [options]", description: "MultiWOZ context-to-response metrics with mwzeval parity: BLEU, Inform & Success, lexical richness, DST", load: async () => (await import('./evaluate.js')).register },
  { name: "gcdf1", aliases: [], term: "gcdf1 [options]", description: "I-GCDF1 and R-GCDF1 of a user model from its conversations (SGD format with goal and NLU per turn)", load: async () => (await import('./gcdf1.js')).register },
  { name: "merge", aliases: [], term: "merge [options] <shard...>", description: "join the reports of a run split with --shard K/N into the report of the whole run", load: async () => (await import('./merge.js')).register },
  { name: "models", aliases: [], term: "models", description: "download and list NLI models (Hugging Face cache layout)", load: async () => (await import('./models.js')).register },
  { name: "nli", aliases: [], term: "nli [options] <premise> <hypothesis>", description: "score one (premise, hypothesis) pair with the NLI model and print its probabilities and label", load: async () => (await import('./nli.js')).register },
  { name: "refs", aliases: [], term: "refs [options]", description: "expand every system action into candidate and negative references (JSONL, one line per action)", load: async () => (await import('./refs.js')).register },
  { name: "report", aliases: [], term: "report [options] <runs...>", description: "one self-contained HTML report of runs: comparison table, signatures, charts, failing turns (opens offline)", load: async () => (await import('./report.js')).register },
  { name: "rerank", aliases: [], term: "rerank [options]", description: "choose, per item, the candidate utterance that realises the most dialogue actions (SGSAcc fidelity)", load: async () => (await import('./rerank.js')).register },
  { name: "sacrebleu", aliases: [], term: "sacrebleu [args...]", description: "sacreBLEU 2.6's command line for local files, printing what it prints (JSON for one system, tables for several, its paired tests, --sentence-level), todeval's BLEU, chrF/chrF++ and TER; the signature's version names todeval", load: async () => (await import('./sacrebleu.js')).register },
  { name: "score", aliases: [], term: "score [options]", description: "SGSAcc (with and without validation, seen/unseen), SER and BLEU of a system, or of the ground truth", load: async () => (await import('./score.js')).register },
  { name: "serve", aliases: [], term: "serve [options]", description: "serve rerank, SGSAcc scoring and NLI over HTTP, all requests sharing one batched NLI runner (docs/serve.md)", load: async () => (await import('./serve.js')).register },
  { name: "ser", aliases: [], term: "ser [options]", description: "slot error rate: share of utterances missing a non-categorical slot value of their actions (overall and per service)", load: async () => (await import('./ser.js')).register },
];

/** The command typed as `word` (a name or an alias), if any. */
export function findCommand(word: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === word || c.aliases.includes(word));
}

/** Every command's register function, each module loaded (the stdio server, the tests of all flags). */
export function loadCommands(): Promise<RegisterCommand[]> {
  return Promise.all(COMMANDS.map((c) => c.load()));
}

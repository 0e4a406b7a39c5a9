import { setFlagsFromString } from 'node:v8';
import { Option, type Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { GRANULARITIES, loadSgsaccData, SGSACC_DEFAULTS } from '../../metrics/sgsacc/index.js';
import { DEFAULT_LIMITS, LIMIT_FLAGS, type ServeLimits } from '../../serve/limits.js';
import { serveFaithfulness } from '../../serve/embed.js';
import { checkBinding, probeBinding } from '../../serve/server.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDatasetOptions, boundedInt, datasetDataDir, datasetLoadOptions, hostName, portNumber, positiveInt, rankByFrom, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { addContextControlOptions, referenceSelectionOption, sgsaccSettingsOf, type SgsaccCliFlags } from '../sgsacc-options.js';
import { RANK_BY } from '../../rerank/index.js';

interface ServeFlags extends NliCliFlags, DatasetFlags, ServeLimits, SgsaccCliFlags {
  dataset: DatasetName;
  host: string;
  port: number;
  token?: string;
  logLevel: string;
  references?: string;
  rankBy: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('serve')
    .description('serve rerank, SGSAcc scoring and NLI over HTTP, all requests sharing one batched NLI runner (docs/serve.md)')
    .option('--host <host>', 'address to listen on; anything but loopback needs --token', hostName('--host'), '127.0.0.1')
    .option('--port <n>', 'port to listen on (0: any free port)', portNumber('--port'), 8765)
    .addOption(new Option('--token <token>', 'require Authorization: Bearer <token> (at least 16 characters)').env('TODEVAL_TOKEN'))
    .addOption(new Option('--log-level <level>', 'JSON request log on stdout').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'));
  addDatasetOptions(cmd, {
    defaultDataset: 'sgd',
    datasetHelp: 'schema and rules of the actions, and the turns dataset_id names',
    dialoguesHelp: 'your own dialogues for dataset_id lookups instead of the data dir',
    skipInvalidHelp: 'accepted for symmetry: invalid dataset turns are always skipped (a request naming one gets 400)',
  })
    .option('--references <file>', 'stored references (JSONL, as `score --references` writes) for /v1/score dataset turns; extended with new turns')
    .option('--no-context', 'do not retry with context + slot description in the premise')
    .option('--no-validation', '/v1/score keeps turns whose ground truth fails validation')
    .option('--hallucination', 'also check facts => text (references entail the utterance) in /v1/score and /v1/rerank: four-way labels')
    .addOption(new Option('--granularity <unit>', '/v1/score: sentence also checks each sentence of the utterance against each fact (implies --hallucination)').choices(GRANULARITIES))
    .option('--rank-by <order>', `/v1/rerank order: ${RANK_BY.join(' | ')} (omission-hallucination and omission-sentences imply --hallucination)`, 'fidelity')
    .addOption(referenceSelectionOption(SGSACC_DEFAULTS.serve.referenceSelection));
  addContextControlOptions(cmd, SGSACC_DEFAULTS.serve.contextControl);
  for (const l of LIMIT_FLAGS) cmd.option(`${l.flag} <n>`, l.help, l.max ? boundedInt(l.flag, l.max.value, l.max.why) : positiveInt(l.flag), DEFAULT_LIMITS[l.key]);
  addNliOptions(cmd);
  cmd.action(async (flags: ServeFlags) => {
    await runServe(flags);
  });
}

/**
 * A server lives for hours and is sent new texts all day: V8's default heap sizing, tuned for
 * throughput, let each heap (the event loop's and each worker thread's) grow to several times what
 * it holds before collecting, so RSS swung by 40-75% as a cache generation or memo filled and went
 * (docs/serve.md, "Memory and the worst body"). --optimize-for-size makes V8 collect sooner and keep
 * heaps near their live size; the host work it slows is small beside the model's. Set before the
 * model, the data and the threads are loaded, so every heap of the process grows under it.
 * TODEVAL_SERVE_V8_FLAGS replaces it (empty: V8's defaults).
 */
const SERVE_V8_FLAGS = '--optimize-for-size';

async function runServe(flags: ServeFlags): Promise<void> {
  // Before any loading: a refused binding should not cost a model load first.
  checkBinding(flags.host, flags.token);
  const v8Flags = process.env.TODEVAL_SERVE_V8_FLAGS ?? SERVE_V8_FLAGS;
  if (v8Flags.trim() !== '') setFlagsFromString(v8Flags);
  const rankBy = rankByFrom(flags.rankBy);
  const limits = Object.fromEntries(LIMIT_FLAGS.map((l) => [l.key, flags[l.key]])) as unknown as ServeLimits;
  refuseOutputOverInput({ '--references': flags.references, '--cache': flags.cache }, { '--dialogues': flags.dialogues, '--schema': flags.schema });
  // The address is bound once and let go before the data and the model load: a port in use or a
  // host that is not this machine's is found in a second, not after a model load.
  await probeBinding(flags.host, flags.port);
  // Invalid dataset turns only matter if a request names them (answered 400 then).
  const data = loadSgsaccData({ ...datasetLoadOptions(flags, datasetDataDir(flags)), skipInvalid: true });
  const server = await serveFaithfulness({
    nli: nliOptionsFrom(flags),
    data,
    dataset: flags.dataset,
    host: flags.host,
    port: flags.port,
    token: flags.token,
    logLevel: flags.logLevel,
    limits,
    ...sgsaccSettingsOf(flags),
    rankBy,
    referencesFile: flags.references,
  });
  const runner = server.runner;
  const s = runner.modelSignature;
  process.stderr.write(`todeval serve: listening on ${server.url} (model ${s.modelId}, ${s.dtype}, ${runner.device}; dataset ${flags.dataset})\n`);

  // The CLI's default handlers exit at once; a server first answers what it has accepted.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  const running = server;
  const stop = (signal: string) => {
    process.stderr.write(`todeval serve: ${signal}: finishing requests in flight\n`);
    running.close().then(
      () => {
        process.stderr.write('todeval serve: stopped, NLI cache flushed\n');
        process.exit(0);
      },
      (e: unknown) => {
        process.stderr.write(`todeval serve: shutdown failed: ${(e as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

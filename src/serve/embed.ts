import type { DestinationStream } from 'pino';
import type { DatasetName } from '../adapters/load.js';
import { sgsaccReferencesSignature } from '../pipeline/sgsacc.js';
import { RecordStore, type SgsaccData, type TurnReferences } from '../metrics/sgsacc/index.js';
import { createNliRunner, type NliRunner, type NliRunnerOptions } from '../nli/runner.js';
import { resolveServeConfig, type ServeSettings } from './config.js';
import { ReopeningRunner } from './reopening-runner.js';
import { resolveLimits, type ServeLimits } from './limits.js';
import { ServeMetrics } from './metrics.js';
import { checkBinding, startServer, type RunningServer } from './server.js';

/**
 * A server tokenizes on a thread of its own unless told otherwise: tokenizing a body's texts on the
 * event loop held /healthz and every other request for as long as it took (the worst body, 8 pairs
 * of 16,384-character words, 150-250 ms on a quiet machine), while on a thread the event loop only
 * parses the body and looks its texts up (about 30 ms for that body). One thread is enough for
 * that; more only tokenize faster.
 */
export const SERVE_TOKENIZER_THREADS = 1;

/**
 * `todeval serve` from a program: the same service, options named as the CLI's flags; the SGSAcc
 * and rerank settings (ServeSettings) take the serve product's defaults (the context-only control on).
 */
export interface ServeOptions extends ServeSettings {
  /** The NLI runner to create (model, device, dtype, threads, batch limits, cache). */
  nli: Omit<NliRunnerOptions, 'onProgress'>;
  /** Schema, rules and turns (`loadSgsaccData`): actions resolve against them, dataset ids name their turns. */
  data: SgsaccData;
  dataset: DatasetName;
  /** Default 127.0.0.1; anything else needs `token`. */
  host?: string;
  /** Default 8765; 0 picks a free port (see `url` on the result). */
  port?: number;
  token?: string;
  logLevel?: string;
  logStream?: DestinationStream;
  limits?: Partial<ServeLimits>;
  /** Stored references (JSONL, as `score --references` writes) for /v1/score dataset turns; extended with new turns. */
  referencesFile?: string;
}

export interface ServingFaithfulness extends RunningServer {
  /** The one runner all requests share (its stats, its model signature). */
  runner: NliRunner;
}

/**
 * Starts the faithfulness service: one NLI runner (replaced by a new one if its inference thread is
 * lost), metrics wired to its progress, optional stored
 * references, the HTTP app listening. `close()` stops accepting, answers what is in flight, then
 * closes the runner (flushing its pair cache).
 */
export async function serveFaithfulness(o: ServeOptions): Promise<ServingFaithfulness> {
  const host = o.host ?? '127.0.0.1';
  // Before any loading: a refused binding should not cost a model load first.
  checkBinding(host, o.token);
  // The library edge of serve (the CLI's flags come through here too): its configuration, once.
  const routes = resolveServeConfig(o);
  // Checked as the flags are, before the model loads.
  const limits: ServeLimits = resolveLimits(o.limits);
  let runner: NliRunner | undefined;
  let server: RunningServer | undefined;
  const metrics: ServeMetrics = new ServeMetrics({
    stats: () => runner!.stats(),
    queuedPairs: (): number => runner!.stats().issued - metrics.pairsDone,
    reservedPairs: () => server?.service.admission.pending ?? 0,
  });
  runner = await ReopeningRunner.open(
    // The pair cache is the one part of a server that grows with what it is asked: bounded here.
    (onProgress) => createNliRunner({ ...o.nli, tokenizerThreads: o.nli.tokenizerThreads ?? SERVE_TOKENIZER_THREADS, cacheBytes: limits.maxCacheBytes, onProgress }),
    (done, issued) => metrics.onRunnerProgress(done, issued),
    (line) => process.stderr.write(`todeval serve: ${line}\n`),
  );
  try {
    const references = o.referencesFile
      ? RecordStore.open<TurnReferences>(
          o.referencesFile,
          'todeval-sgsacc-references',
          sgsaccReferencesSignature(runner.modelSignature, o.data, o.dataset, routes.sgsacc),
        )
      : undefined;
    server = await startServer({
      host,
      port: o.port ?? 8765,
      token: o.token,
      logLevel: o.logLevel ?? 'info',
      logStream: o.logStream,
      limits,
      runner,
      metrics,
      data: o.data,
      dataset: o.dataset,
      routes,
      references,
    });
  } catch (e) {
    await runner.close();
    throw e;
  }
  return { ...server, runner };
}

import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { DatasetName } from '../adapters/load.js';
import type { RecordStore, SgsaccData, TurnReferences } from '../metrics/sgsacc/index.js';
import type { NliRunner } from '../nli/runner.js';
import { describeErrno, InputError } from '../util/errors.js';
import { buildApp } from './app.js';
import { isLoopbackHost } from './auth.js';
import type { ServeConfig } from './config.js';
import type { ServeLimits } from './limits.js';
import type { ServeMetrics } from './metrics.js';
import { FaithfulnessService } from './service.js';

export interface ServerConfig {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  token?: string;
  logLevel: string;
  logStream?: DestinationStream;
  limits: ServeLimits;
  runner: NliRunner;
  metrics: ServeMetrics;
  data: SgsaccData;
  dataset: DatasetName;
  /** What the routes run with (resolveServeConfig, built once by serveFaithfulness). */
  routes: ServeConfig;
  references?: RecordStore<TurnReferences>;
}

export interface RunningServer {
  app: FastifyInstance;
  service: FaithfulnessService;
  url: string;
  /**
   * Stop accepting, answer what is in flight, then close the runner, which waits for its last batch
   * and flushes the persistent pair cache. Connections still open --timeout-ms + 1 s after the call
   * (a client still sending its request) are cut.
   */
  close(): Promise<void>;
}

/** Anything but loopback is reachable by others: refuse to serve it without a token. */
export function checkBinding(host: string, token: string | undefined): void {
  if (!isLoopbackHost(host) && !token) {
    throw new InputError(`--host ${host} is reachable from other machines: give --token (or set TODEVAL_TOKEN) so requests must carry it`);
  }
  if (token !== undefined && token.length < 16) throw new InputError('--token must be at least 16 characters');
}

/**
 * Binds `host:port` and lets it go again: what would stop the server from listening (a port in use,
 * a privileged port, a host that does not resolve or is not an address of this machine) as one
 * line naming the flag, found before anything slow is loaded. Port 0 always binds.
 */
export async function probeBinding(host: string, port: number): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, () => resolve());
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new InputError(`--port ${port} is in use on ${host}; pick another, or 0 for any free port`);
    if (code === 'EACCES') throw new InputError(`--port ${port} needs privileges on this machine (ports below 1024); pick a port above 1023`);
    if (code === 'EADDRNOTAVAIL') throw new InputError(`--host ${host} is not an address of this machine`);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') throw new InputError(`--host ${host}: no such host (it does not resolve)`);
    throw new InputError(`cannot listen on ${host}:${port}: ${describeErrno(e)}`);
  } finally {
    if (probe.listening) await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
}

export async function startServer(cfg: ServerConfig): Promise<RunningServer> {
  checkBinding(cfg.host, cfg.token);
  const service = new FaithfulnessService({
    runner: cfg.runner,
    data: cfg.data,
    dataset: cfg.dataset,
    routes: cfg.routes,
    references: cfg.references,
    limits: cfg.limits,
    pairsPerSecond: () => cfg.metrics.busyPairsPerSecond(),
  });
  const app = buildApp({ service, metrics: cfg.metrics, token: cfg.token, logLevel: cfg.logLevel, logStream: cfg.logStream });
  await app.listen({ host: cfg.host, port: cfg.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : cfg.port;
  const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  let closing: Promise<void> | undefined;
  return {
    app,
    service,
    url: `http://${host}:${port}`,
    close: () =>
      (closing ??= (async () => {
        // app.close() waits for every open connection, and one still sending its request (headers
        // or body) is never timed out once closing (Node stops checking its timeouts then): a client
        // that sent half a body held SIGTERM forever. Requests already received are answered within
        // --timeout-ms of their admission; past that (and a margin for parsing), the connections
        // left are cut, so close() always returns.
        const deadline = setTimeout(() => app.server.closeAllConnections(), closeDeadlineMs(cfg.limits.timeoutMs));
        try {
          await app.close();
        } finally {
          clearTimeout(deadline);
        }
        await cfg.runner.close();
      })()),
  };
}

/** Margin past --timeout-ms for a request received just before closing to be parsed and admitted. */
const CLOSE_MARGIN_MS = 1000;

/** When close() cuts the connections left: --timeout-ms and the margin, within the longest timer Node keeps (a longer one fires at once). */
function closeDeadlineMs(timeoutMs: number): number {
  return Math.min(timeoutMs + CLOSE_MARGIN_MS, 2 ** 31 - 1);
}

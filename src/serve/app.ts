import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import { formatSignature, type Signature } from '../util/signature.js';
import type { RawRerankItem } from '../rerank/index.js';
import { isInputError, ModelRunError } from '../util/errors.js';
import { OverloadedError, TooLargeError } from './admission.js';
import { bearerMatches } from './auth.js';
import { ModelHealth } from './health.js';
import type { ServeMetrics } from './metrics.js';
import { bodySchemas } from './schemas.js';
import type { FaithfulnessService, RawScoreItem } from './service.js';

export interface AppOptions {
  service: FaithfulnessService;
  metrics: ServeMetrics;
  /** Required as `Authorization: Bearer <token>` on every route but the probes /healthz and /readyz when set. */
  token?: string;
  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  logLevel: string;
  /** Where the JSON log lines go (default stdout). */
  logStream?: DestinationStream;
}

/** Routes open without the token: liveness and readiness probes cannot carry one. */
const OPEN_ROUTES = new Set(['/healthz', '/readyz']);
/** Routes whose answers need the model: a 200 from one proves it works again. */
const MODEL_ROUTES = new Set(['/v1/rerank', '/v1/score', '/v1/nli']);

const signed = <T extends { signature: Signature }>(r: T) => ({ ...r, signatureText: formatSignature(r.signature) });

/** The HTTP face of the service: routes, body validation, auth, limits, one log line per request. */
export function buildApp(opts: AppOptions): FastifyInstance {
  const { service, metrics } = opts;
  const limits = service.config.limits;
  const health = new ModelHealth(limits.degradedAfter);
  metrics.setHealth(health);
  const app = Fastify({
    logger: opts.logStream ? { level: opts.logLevel, stream: opts.logStream } : { level: opts.logLevel },
    // One line per request, written in onResponse below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: limits.maxBodyBytes,
    // Bodies are taken as sent: a string where a number belongs is an error, not coerced, and an
    // unknown field is refused rather than silently dropped.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    return503OnClosing: true,
    // Fastify's default 0 let a client that sent half a request hold its socket and the buffered
    // body for ever; past it the client gets 408 (Fastify's clientError handler) and the connection is closed.
    requestTimeout: limits.receiveTimeoutMs,
    http: {
      // Node looks for such connections only every connectionsCheckingInterval (30 s by default): a
      // quarter of the timeout cuts one within 1.25 times it, never polling more than 10 times a second.
      connectionsCheckingInterval: receiveCheckMs(limits.receiveTimeoutMs),
      // Node's default time for the headers (60 s) is swapped with requestTimeout when longer than
      // it, which would give a client sending its body 60 s instead of --receive-timeout-ms.
      headersTimeout: Math.min(60_000, limits.receiveTimeoutMs),
    },
  });
  // Past it Node closes each new connection as it is accepted: with every socket able to hold a
  // body being received, the number of sockets is what bounds the memory clients can pin.
  app.server.maxConnections = limits.maxConnections;
  // Bodies are JSON only (docs/serve.md): Fastify also parses text/plain, as a string the schema then
  // refused with 400 "body must be object"; without its parser such a body is 415, as any non-JSON type.
  app.removeContentTypeParser('text/plain');
  const schemas = bodySchemas(limits);
  for (const s of schemas.shared) app.addSchema(s);

  addRequestHooks(app, opts, health);
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ModelRunError) health.failure();
    return answerError(err, req, reply);
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: 'not_found', message: `no route ${req.method} ${req.url}` }));

  // Liveness: always 200 while the process answers (a restart does not mend a broken model);
  // `status` says "degraded" once the model has failed --degraded-after requests in a row.
  app.get('/healthz', async () => {
    const s = service.runner.modelSignature;
    return {
      status: health.degraded ? 'degraded' : 'ok',
      modelFailuresInARow: health.failuresInARow,
      model: s.modelId,
      revision: s.revision,
      dtype: s.dtype,
      device: service.runner.device,
      maxLength: service.runner.maxLength,
      dataset: service.config.dataset,
      pendingPairs: service.admission.pending,
      // Clients split their batches to these instead of learning them from 400/413 answers.
      limits,
    };
  });
  // Readiness: 503 while degraded, so a load balancer or Kubernetes sends the requests elsewhere.
  app.get('/readyz', async (_req, reply) => {
    if (!health.degraded) return { status: 'ready' };
    return reply.code(503).header('Retry-After', String(Math.ceil(ModelHealth.RETRY_MS / 1000))).send({
      status: 'degraded',
      message: `the model failed the last ${health.failuresInARow} requests that needed it (--degraded-after ${limits.degradedAfter}); the log names the failures`,
    });
  });
  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  app.post(
    '/v1/rerank',
    {
      schema: { body: schemas.rerank },
      // One item may be sent on its own, as a line of the rerank input file.
      preValidation: async (req: FastifyRequest) => {
        const b = req.body as Record<string, unknown> | null;
        if (b && typeof b === 'object' && !Array.isArray(b) && !('items' in b) && 'candidates' in b) req.body = { items: [b] };
      },
    },
    async (req) => {
      const body = req.body as { items: RawRerankItem[]; systems?: string[] };
      return signed(await service.rerank(body.items, body.systems));
    },
  );
  app.post('/v1/score', { schema: { body: schemas.score } }, async (req) => {
    const body = req.body as { items: RawScoreItem[] };
    return signed(await service.score(body.items));
  });
  app.post('/v1/nli', { schema: { body: schemas.nli } }, async (req) => {
    const body = req.body as { pairs: { premise: string; hypothesis: string }[] };
    return signed(await service.nli(body.pairs));
  });
  return app;
}

/** How often Node checks for requests past --receive-timeout-ms: a quarter of it, between 100 ms and Node's default 30 s. */
function receiveCheckMs(receiveTimeoutMs: number): number {
  return Math.min(30_000, Math.max(100, Math.ceil(receiveTimeoutMs / 4)));
}

/** Auth, the in-flight gauge, closing connections once closing, and one log line and metric per request. */
function addRequestHooks(app: FastifyInstance, opts: AppOptions, health: ModelHealth): void {
  const { metrics } = opts;
  let inFlight = 0;
  metrics.setInFlight(() => inFlight);
  app.addHook('onRequest', async (req, reply) => {
    inFlight++;
    // 'close' comes once per response, sent or aborted by the client.
    reply.raw.once('close', () => inFlight--);
    if (opts.token !== undefined && !OPEN_ROUTES.has(req.routeOptions.url ?? '') && !bearerMatches(req.headers.authorization, opts.token)) {
      return reply.code(401).header('WWW-Authenticate', 'Bearer').send({ error: 'unauthorized', message: 'missing or wrong Authorization: Bearer <token>' });
    }
  });
  // Once closing, answers in flight end their connection: a client's idle keep-alive socket would
  // otherwise hold close() open after its last answer (only sockets idle at the start are closed).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    metrics.requests.inc({ route, status: String(reply.statusCode) });
    if (reply.statusCode === 200 && MODEL_ROUTES.has(route)) health.success();
    metrics.latency.observe({ route }, seconds);
    req.log.info({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
  });
}

/** Errors as answers: bad input 400, overload 503 with Retry-After, too large 413, anything else 500 (logged). */
function answerError(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
    if (err.validation) return reply.code(400).send({ error: 'bad_request', message: err.message });
    if (isInputError(err)) return reply.code(400).send({ error: 'bad_request', message: err.oneLine() });
    if (err instanceof OverloadedError) return reply.code(503).header('Retry-After', String(err.retryAfterSeconds)).send({ error: 'overloaded', message: err.message });
    if (err instanceof TooLargeError) return reply.code(413).send({ error: 'too_large', message: err.message });
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send({ error: err.code, message: `content-type ${req.headers['content-type'] ?? '(none)'} is not accepted: send the body as JSON (content-type: application/json)` });
    }
    // Fastify's own client errors: bad JSON, body too large, unsupported content type...
    if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ error: err.code ?? 'bad_request', message: err.message });
    }
    req.log.error({ err }, 'internal error');
    return reply.code(500).send({ error: 'internal', message: 'internal error (logged by the server)' });
}

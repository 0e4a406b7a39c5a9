import { constants } from 'node:buffer';
import { InputError } from '../util/errors.js';

/** What protects the process from any one client; every value is a `todeval serve` flag. */
export interface ServeLimits {
  /** Largest request body in bytes (--max-body-bytes). */
  maxBodyBytes: number;
  /** Items per /v1/rerank or /v1/score request (--max-items). */
  maxItems: number;
  /** Candidates per rerank item (--max-candidates). */
  maxCandidates: number;
  /** Actions per inline item (--max-actions). */
  maxActions: number;
  /** Pairs per /v1/nli request (--max-pairs). */
  maxPairs: number;
  /**
   * Pairs admitted but not yet answered, over all requests (--max-pending-pairs). A request that
   * would go past it is refused with 503 and Retry-After instead of queueing without bound.
   */
  maxPendingPairs: number;
  /** Milliseconds before a request is answered 503 (--timeout-ms); its pairs still finish and are cached. */
  timeoutMs: number;
  /**
   * Bytes the pair cache may hold in memory (--max-cache-bytes): past it the pairs used least
   * recently are dropped (todeval_nli_cache_evictions_total), so a server asked new pairs all day
   * stays the same size. A --cache file still gets every pair.
   */
  maxCacheBytes: number;
  /**
   * Requests in a row the model fails (ModelRunError) before the service reports itself degraded
   * (--degraded-after): /readyz answers 503 and /healthz says "degraded" until the model answers again.
   */
  degradedAfter: number;
  /**
   * Connections open at once, idle keep-alive ones included (--max-connections): Node drops the
   * ones past it as they arrive. Each connection may hold up to --max-body-bytes of a body being
   * received, so without it any number of clients bounded nothing.
   */
  maxConnections: number;
  /**
   * Milliseconds a client has to send a whole request, headers and body (--receive-timeout-ms):
   * past it the connection gets 408 and is closed. Without it a client that sent half a body held
   * its socket and the buffered bytes for ever. Separate from --timeout-ms, which starts once the
   * request is received.
   */
  receiveTimeoutMs: number;
}

export const DEFAULT_LIMITS: ServeLimits = {
  maxBodyBytes: 1 << 20,
  maxItems: 64,
  maxCandidates: 16,
  maxActions: 32,
  maxPairs: 512,
  maxPendingPairs: 8192,
  timeoutMs: 60_000,
  // About 150k pairs of SGD-sized texts at the estimate's 420 bytes a pair (docs/serve.md).
  maxCacheBytes: 64 * 2 ** 20,
  degradedAfter: 3,
  // 256 bodies of the default 1 MiB being received at once: a quarter of a GiB at worst.
  maxConnections: 256,
  // A 1 MiB body at about 35 KiB/s, far below any link a client of the service uses.
  receiveTimeoutMs: 30_000,
};

/** Each limit's `todeval serve` flag and --help line, in --help order; `max` where the runtime caps the value. */
export const LIMIT_FLAGS: readonly { key: keyof ServeLimits; flag: string; help: string; max?: { value: number; why: string } }[] = [
  {
    key: 'maxBodyBytes',
    flag: '--max-body-bytes',
    help: 'largest request body',
    // A body is parsed as one string: a larger limit would admit bodies that fail only once read.
    max: { value: constants.MAX_STRING_LENGTH, why: 'the longest string JSON.parse can read' },
  },
  { key: 'maxItems', flag: '--max-items', help: 'items per rerank/score request' },
  { key: 'maxCandidates', flag: '--max-candidates', help: 'candidates per rerank item' },
  { key: 'maxActions', flag: '--max-actions', help: 'actions per inline item' },
  { key: 'maxPairs', flag: '--max-pairs', help: 'pairs per /v1/nli request' },
  { key: 'maxPendingPairs', flag: '--max-pending-pairs', help: 'NLI pairs admitted and not yet answered, over all requests; beyond: 503 + Retry-After' },
  {
    key: 'timeoutMs',
    flag: '--timeout-ms',
    help: 'answer 503 to a request not done within this time',
    // Node fires a longer timer at once, which would answer every request 503.
    max: { value: 2 ** 31 - 1, why: 'the longest timer Node keeps, about 24.8 days' },
  },
  { key: 'maxCacheBytes', flag: '--max-cache-bytes', help: 'bytes of NLI results kept in memory; beyond, the least recently used pairs are dropped' },
  { key: 'degradedAfter', flag: '--degraded-after', help: 'model failures in a row after which /readyz answers 503 and /healthz says degraded' },
  { key: 'maxConnections', flag: '--max-connections', help: 'connections open at once (idle keep-alive ones included); beyond, new ones are dropped' },
  {
    key: 'receiveTimeoutMs',
    flag: '--receive-timeout-ms',
    help: 'time a client has to send its whole request; beyond: 408 and the connection closed',
    // Node's connection check reads it as a 32-bit count of milliseconds: a larger value would wrap.
    max: { value: 2 ** 31 - 1, why: 'about 24.8 days, the longest --timeout-ms too' },
  },
];

/**
 * The limits of a library call (serveFaithfulness's `limits`) over DEFAULT_LIMITS, refused where the
 * flags' parsers refuse them: passed through unchecked, a `timeoutMs` past Node's longest timer
 * answered every request 503 at once and a NaN `maxPendingPairs` bounded nothing. A limit left out
 * or undefined keeps its default (spread as given, an undefined one replaced it).
 */
export function resolveLimits(given: Partial<ServeLimits> = {}): ServeLimits {
  const limits: ServeLimits = { ...DEFAULT_LIMITS };
  for (const l of LIMIT_FLAGS) {
    const v = given[l.key];
    if (v === undefined) continue;
    const name = `limits.${l.key} (${l.flag})`;
    if (!Number.isSafeInteger(v) || v < 1) throw new InputError(`${name} must be a positive integer, not ${v}`);
    if (l.max && v > l.max.value) throw new InputError(`${name} must be at most ${l.max.value} (${l.max.why})`);
    limits[l.key] = v;
  }
  return limits;
}

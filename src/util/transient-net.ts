/**
 * Network failures that a new request of the same idempotent GET may not meet: the connection was
 * reset, closed or timed out by something between us and the server (a proxy, a CDN node restarting,
 * a flaky link), a resolver answered "try again" (EAI_AGAIN), or a gateway answered 502/503/504. Not
 * a name that does not resolve (ENOTFOUND) or a refused connection: those say the server is not
 * there, and retrying only delays the one-line error.
 */
const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EAI_AGAIN',
  // undici (Node's fetch): the other side closed the socket mid-response, or a timeout passed.
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const TRANSIENT_STATUS = new Set([502, 503, 504]);

/** Is `e` (or an error in its `cause` chain) one of the failures above? */
export function isTransientNetError(e: unknown): boolean {
  for (let err = e, depth = 0; err !== null && typeof err === 'object' && depth < 8; depth++) {
    const { code, statusCode, cause } = err as { code?: unknown; statusCode?: unknown; cause?: unknown };
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
    if (typeof statusCode === 'number' && TRANSIENT_STATUS.has(statusCode)) return true;
    err = cause;
  }
  return false;
}

/** Is an HTTP status one a retry may not meet (a gateway's 502/503/504)? */
export const isTransientStatus = (status: number): boolean => TRANSIENT_STATUS.has(status);

/** How a download meets a transient failure: tries in all, and the wait before the first retry, doubled at each next one. */
export interface RetryPolicy {
  attempts: number;
  firstDelayMs: number;
}

/** 4 tries, waiting 0.5, 1 and 2 s between them: a reset connection usually works at the next request. */
export const DOWNLOAD_RETRY: RetryPolicy = { attempts: 4, firstDelayMs: 500 };

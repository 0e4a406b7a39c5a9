import { describe, expect, it } from 'vitest';
import { DOWNLOAD_RETRY, isTransientNetError } from '../../src/util/transient-net.js';

describe('isTransientNetError: which failed requests models pull tries again', () => {
  const withCause = (code: string) => new TypeError('terminated', { cause: Object.assign(new Error('socket'), { code }) });

  it('a reset or closed socket, a timeout, a gateway 502/503/504, at any depth of the cause chain', () => {
    for (const code of ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_BODY_TIMEOUT']) expect(isTransientNetError(withCause(code)), code).toBe(true);
    expect(isTransientNetError(new Error('outer', { cause: withCause('ECONNRESET') }))).toBe(true);
    for (const statusCode of [502, 503, 504]) expect(isTransientNetError(Object.assign(new Error('hub'), { statusCode }))).toBe(true);
  });

  it('not a server that is not there, a client error, or a bare message', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'ENOSPC']) expect(isTransientNetError(withCause(code)), code).toBe(false);
    for (const statusCode of [401, 403, 404, 416, 500]) expect(isTransientNetError(Object.assign(new Error('hub'), { statusCode }))).toBe(false);
    expect(isTransientNetError('fetch failed')).toBe(false);
    expect(isTransientNetError(undefined)).toBe(false);
  });

  it('the default policy is bounded', () => {
    expect(DOWNLOAD_RETRY.attempts).toBeGreaterThan(1);
    expect(DOWNLOAD_RETRY.attempts).toBeLessThanOrEqual(5);
  });
});

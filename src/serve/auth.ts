import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/** Hosts that only this machine can reach: the service may run without a token there. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * Whether an Authorization header carries the token. Both sides are hashed first so the comparison
 * takes the same time whatever the length or content of the guess (timingSafeEqual needs equal
 * lengths, and comparing lengths would itself leak the token's).
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer[ ]+(.+)$/i.exec(header ?? '');
  const given = createHash('sha256').update(m ? m[1].trim() : '').digest();
  const want = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, want) && m !== null;
}

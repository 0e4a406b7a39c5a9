import { InputError } from './errors.js';

/**
 * Check a base URL the user gave (a flag or an environment variable) before anything is fetched,
 * so a typo is reported as that setting rather than as fetch's "Invalid URL" or a failed request
 * to a half-built address.
 */
export function requireHttpUrl(value: string, setting: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InputError(`${setting}: ${JSON.stringify(value)} is not an http(s) URL`);
  }
  return value;
}

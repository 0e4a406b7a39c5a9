import { expect } from 'vitest';
import { InputError } from '../../src/util/errors.js';

/** The one line an InputError thrown by `f` prints; fails the test when `f` throws nothing or another error. */
export function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as InputError).oneLine();
  }
  throw new Error('expected an InputError');
}

import { InputError } from '../util/errors.js';

/**
 * Collects per-item input errors: rethrows at once unless --skip-invalid asked to list them and go on.
 * Adapters call `guard` around each dialogue/turn so one bad item never hides the others.
 */
export class InvalidCollector {
  readonly invalid: InputError[] = [];
  constructor(private readonly skipInvalid: boolean) {}

  /** An invalid item found outside a guarded call: thrown (default) or recorded. */
  reject(e: InputError): void {
    if (!this.skipInvalid) throw e;
    this.invalid.push(e);
  }

  /** Runs fn; on InputError either throws (default) or records it and returns undefined. */
  guard<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      this.reject(e);
      return undefined;
    }
  }
}

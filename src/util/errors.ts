/**
 * An error in what the user gave us (a file, a dialogue, a flag). The CLI prints it as one line
 * and exits with code 2, without a stack trace: the user needs to know where, not our internals.
 */
export class InputError extends Error {
  readonly file?: string;
  readonly where?: string;

  constructor(message: string, opts: { file?: string; where?: string } = {}) {
    super(message);
    this.name = 'InputError';
    this.file = opts.file;
    this.where = opts.where;
  }

  /** `file: dialogue/turn: message`, omitting the parts we do not know. */
  oneLine(): string {
    return [this.file, this.where, this.message].filter((p) => p !== undefined && p !== '').join(': ');
  }
}

/** Raised for a missing model, dataset or other resource the user must fetch first (exit 2). */
export class MissingResourceError extends InputError {
  constructor(message: string, opts: { file?: string; where?: string } = {}) {
    super(message, opts);
    this.name = 'MissingResourceError';
  }
}

export function isInputError(e: unknown): e is InputError {
  return e instanceof InputError;
}

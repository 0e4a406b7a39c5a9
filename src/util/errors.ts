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

const ERRNO_WORDS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory, expected a file',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  ENAMETOOLONG: 'file name too long',
  EDQUOT: 'disk quota exceeded',
  // zlib's, for a file named .gz that is not gzip data or was cut short.
  Z_DATA_ERROR: 'not valid gzip data (named .gz, but corrupt or not compressed)',
  Z_BUF_ERROR: 'gzip data cut short (the file is truncated)',
  // Node's, for a file beyond what one read (2 GiB) or one string (about 512 M characters) holds.
  ERR_FS_FILE_TOO_LARGE: 'file too large to read whole',
  ERR_STRING_TOO_LONG: 'file too large to read whole',
};

/** A file-system error code in words ("EISDIR" -> "is a directory, expected a file"); unknown codes as they are. */
export function describeErrno(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code !== 'string') return String((e as Error)?.message ?? e);
  return ERRNO_WORDS[code] ?? code;
}

/**
 * The model failed while running a batch (ONNX Runtime refused a shape, a kernel failed): not the
 * user's input, so not exit 2. The CLI prints the one-line message and exits MODEL_FAILURE_EXIT_CODE;
 * serve answers 500 and counts it towards reporting itself degraded.
 */
export class ModelRunError extends Error {
  constructor(
    readonly model: string,
    readonly rows: number,
    readonly width: number,
    readonly runtimeMessage: string,
  ) {
    super(`model ${model} failed on a batch of ${rows} pair${rows === 1 ? '' : 's'} x ${width} tokens: ${runtimeMessage}`);
    this.name = 'ModelRunError';
  }
}

/** Exit code of a command stopped by a model failure (docs/cli-conventions.md): apart from bad input (2). */
export const MODEL_FAILURE_EXIT_CODE = 3;

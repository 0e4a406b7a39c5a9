import type { Command } from 'commander';
import { register as models } from './models.js';
import { register as nli } from './nli.js';

/** Each CLI command lives in its own module and registers itself on the root program. */
export type RegisterCommand = (program: Command) => void;

// One line per command module; keep this list sorted by command name.
export const commands: RegisterCommand[] = [
  models,
  nli,
];

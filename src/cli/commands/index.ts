import type { Command } from 'commander';
import { register as bleu } from './bleu.js';
import { register as compare } from './compare.js';
import { register as data } from './data.js';
import { register as doctor } from './doctor.js';
import { register as evaluate } from './evaluate.js';
import { register as gcdf1 } from './gcdf1.js';
import { register as merge } from './merge.js';
import { register as models } from './models.js';
import { register as nli } from './nli.js';
import { register as refs } from './refs.js';
import { register as report } from './report.js';
import { register as rerank } from './rerank.js';
import { register as sacrebleu } from './sacrebleu.js';
import { register as score } from './score.js';
import { register as serve } from './serve.js';
import { register as ser } from './ser.js';

/** Each CLI command lives in its own module and registers itself on the root program. */
export type RegisterCommand = (program: Command) => void;

// One line per command module; keep this list sorted by command name.
export const commands: RegisterCommand[] = [
  bleu,
  compare,
  data,
  doctor,
  evaluate,
  gcdf1,
  merge,
  models,
  nli,
  refs,
  report,
  rerank,
  sacrebleu,
  score,
  serve,
  ser,
];

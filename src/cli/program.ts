import { Command } from 'commander';
import { TODEVAL_VERSION } from '../util/version.js';
import { commands } from './commands/index.js';
import { registerStdio } from './stdio.js';

/**
 * The root program with every command registered. A function, not a module-level object, because
 * `todeval stdio` parses each request with a program of its own: commander keeps the option values
 * of a parse on the command objects, so one program reused would carry one request's flags into the next.
 */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('todeval')
    .description('Faithfulness (SGSAcc, SER), reranking, MultiWOZ metrics and GCDF1 for task-oriented dialogue')
    .version(TODEVAL_VERSION)
    .exitOverride();
  for (const register of commands) register(program);
  registerStdio(program, buildProgram);
  return program;
}

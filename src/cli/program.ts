import { Command } from 'commander';
import { TODEVAL_VERSION } from '../util/version.js';
import { COMMANDS, findCommand, type RegisterCommand } from './commands/index.js';
import { registerStdio, STDIO_COMMANDS } from './stdio.js';

function rootProgram(): Command {
  return new Command()
    .name('todeval')
    .description('Faithfulness (SGSAcc, SER), reranking, MultiWOZ metrics and GCDF1 for task-oriented dialogue')
    .version(TODEVAL_VERSION)
    .exitOverride();
}

/**
 * The root program with the given commands registered, and `stdio` serving them. A function, not a
 * module-level object, because `todeval stdio` parses each request with a program of its own:
 * commander keeps the option values of a parse on the command objects, so one program reused would
 * carry one request's flags into the next.
 */
export function buildProgram(registers: readonly RegisterCommand[]): Command {
  const program = rootProgram();
  for (const register of registers) register(program);
  registerStdio(program, () => buildProgram(registers));
  return program;
}

/**
 * The root program with every command listed by its entry and none loaded: what `--help`, `--version`,
 * no command or an unknown one need. The help shows each command's own term (its options and
 * arguments), which a placeholder does not have.
 */
function listingProgram(): Command {
  const program = rootProgram();
  const terms = new Map<Command, string>();
  for (const entry of COMMANDS) terms.set(program.command(entry.name).aliases([...entry.aliases]).description(entry.description), entry.term);
  registerStdio(program, () => buildProgram([]));
  const help = program.createHelp();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd) ?? help.subcommandTerm(cmd) });
  return program;
}

/** The command word of a command line (the root takes no option with a value): `help X` names X. */
function commandWord(args: readonly string[]): string | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * The program that runs `argv` (node, script, args...): it loads the module of the command named
 * there and no other, so each command starts with what it uses only.
 */
export async function programFor(argv: readonly string[]): Promise<Command> {
  const word = commandWord(argv.slice(2));
  if (word === 'stdio') return buildProgram(await Promise.all(STDIO_COMMANDS.map((name) => findCommand(name)!.load())));
  const entry = word === undefined ? undefined : findCommand(word);
  return entry ? buildProgram([await entry.load()]) : listingProgram();
}

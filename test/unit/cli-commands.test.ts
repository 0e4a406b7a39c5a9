import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, findCommand } from '../../src/cli/commands/index.js';

// The root program lists the commands from their entries without loading their modules (a run
// loads only the module of the command it runs): each entry must say what its module registers.
describe('the command table (src/cli/commands/index.ts) is what each module registers', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))('%s: name, aliases, help term and description', async (_name, entry) => {
    const program = new Command('todeval');
    (await entry.load())(program);
    expect(program.commands).toHaveLength(1);
    const cmd = program.commands[0];
    expect(cmd.name()).toBe(entry.name);
    expect(cmd.aliases()).toEqual(entry.aliases);
    expect(program.createHelp().subcommandTerm(cmd)).toBe(entry.term);
    expect(cmd.description()).toBe(entry.description);
  });

  it('finds a command by its name or an alias, and nothing else', () => {
    for (const c of COMMANDS) for (const word of [c.name, ...c.aliases]) expect(findCommand(word)).toBe(c);
    expect(findCommand('scor')).toBeUndefined();
    expect(findCommand('help')).toBeUndefined();
  });
});

import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { runSacrebleu, type SacrebleuIo, type SacrebleuOutcome } from '../../pipeline/sacrebleu.js';
import { parseSacrebleuArgs } from '../sacrebleu-args.js';

const DESCRIPTION = "sacreBLEU 2.6's command line for local files, printing what it prints (JSON for one system, tables for several, its paired tests, --sentence-level), todeval's BLEU, chrF/chrF++ and TER; the signature's version names todeval";

const USAGE = `usage: todeval sacrebleu REFS... [-i SYSTEM...] [options]

${DESCRIPTION}.
Options are sacreBLEU's (sacrebleu --help), for local reference files: -m {bleu,chrf,ter}...,
-sl, -s/--smooth-method {exp,floor,add-k,none}, -sv, -tok {13a,none,intl,char,zh}, -lc, --force,
-cc, -cw, --chrf-beta, --chrf-whitespace, --chrf-lowercase, --chrf-eps-smoothing,
--ter-case-sensitive, --ter-asian-support, --ter-no-punct, --ter-normalized, -ci, -cin,
-par, -pbs, -parn, -pbsn, -j, -q, -sh, -b, -w, -d, -nc, -f {json,text,latex}, -nr, -e.
Without -i the systems are stdin's tab-separated columns. SACREBLEU_FORMAT and SACREBLEU_SEED
are read as sacreBLEU reads them. Test sets (-t, -l, --list, --echo, ...) are not downloaded.
docs/text-metrics.md says what differs: the signature's version field.
`;

/** `todeval sacrebleu ARGV`: parsed as sacreBLEU parses it, then run; what it prints and its exit code. */
export async function sacrebleuMain(argv: readonly string[], io: SacrebleuIo): Promise<SacrebleuOutcome> {
  const parsed = parseSacrebleuArgs(argv, USAGE);
  if ('exit' in parsed) return { stdout: parsed.stdout ?? '', stderr: parsed.stderr ?? '', code: parsed.exit };
  return runSacrebleu(parsed.args, io);
}

export function register(program: Command): void {
  program
    .command('sacrebleu')
    .description(DESCRIPTION)
    .argument('[args...]', "sacreBLEU's arguments (todeval sacrebleu --help)")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_args: string[], _flags: unknown, cmd: Command) => {
      const r = await sacrebleuMain(cmd.args, { stdin: () => readFileSync(0), env: process.env });
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      process.exitCode = r.code;
    });
}

/**
 * How long each command takes to start, side by side with sacreBLEU and with an earlier commit of
 * todeval, in interleaved rounds on the same machine, then writes the table into docs/startup.md.
 *
 *   npm run bench:startup [-- --rounds N] [--base COMMIT] [--no-write]
 *
 * - todeval: `node bin/todeval.js` of this checkout, built (dist/ is rebuilt first when src/ is newer).
 * - base: the same for COMMIT (default 046dc1c, the commit before lazy command loading), checked out
 *   with `git worktree add` into a temporary folder, built there with this checkout's node_modules,
 *   and removed at the end.
 * - sacreBLEU: `python3 -m sacrebleu` from $SACREBLEU_DIR (default ../shared/tools/sacrebleu) under
 *   $SACREBLEU_PYTHON (default /usr/bin/python3), for the rows sacreBLEU has.
 *
 * Each cell is the median wall time of its rounds; in a round every program runs each row once, in
 * an order that rotates from round to round, so a change of the machine's load falls on all alike.
 * The load average is printed before and after. todeval's and the base's outputs of each row are
 * compared byte for byte (stdout and exit code): the speed-up must change nothing else.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { distIsStale, setup as buildDist } from '../test/helpers/build-setup.js';

const REPO = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROUNDS = Number(flag('--rounds') ?? 5);
const BASE = flag('--base') ?? '046dc1c';
const WRITE = !args.includes('--no-write');
const SACREBLEU_DIR = path.resolve(REPO, process.env.SACREBLEU_DIR ?? '../shared/tools/sacrebleu');
const SACREBLEU_PYTHON = process.env.SACREBLEU_PYTHON ?? '/usr/bin/python3';
const DOC = path.join(REPO, 'docs', 'startup.md');

const run = promisify(execFile);

/** 50 reference and system lines of a few dozen words, the same every run (a linear congruential walk). */
function textFiles(dir: string): { ref: string; sys: string } {
  const words = 'the a hotel train leaves at from to cambridge london is in north south cheap expensive restaurant serves food please book it for two people on friday thank you goodbye'.split(' ');
  let x = 12345;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) % words.length;
  const line = () => Array.from({ length: 12 + (next() % 9) }, () => words[next()]).join(' ');
  const ref = path.join(dir, 'ref.txt');
  const sys = path.join(dir, 'sys.txt');
  writeFileSync(ref, Array.from({ length: 50 }, line).join('\n') + '\n');
  writeFileSync(sys, Array.from({ length: 50 }, line).join('\n') + '\n');
  return { ref, sys };
}

interface Row {
  label: string;
  todeval: string[];
  sacrebleu?: string[];
}

function rows(ref: string, sys: string): Row[] {
  const commands = ['bleu', 'compare', 'data', 'doctor', 'evaluate', 'gcdf1', 'merge', 'models', 'nli', 'refs', 'report', 'rerank', 'score', 'serve', 'ser'];
  return [
    { label: '--help', todeval: ['--help'], sacrebleu: ['--help'] },
    { label: '--version', todeval: ['--version'], sacrebleu: ['--version'] },
    { label: 'bleu, 50 lines', todeval: ['bleu', ref, '-i', sys], sacrebleu: [ref, '-i', sys] },
    { label: 'bleu -m chrf, 50 lines', todeval: ['bleu', ref, '-i', sys, '-m', 'chrf'], sacrebleu: [ref, '-i', sys, '-m', 'chrf'] },
    { label: 'bleu -m ter, 50 lines', todeval: ['bleu', ref, '-i', sys, '-m', 'ter'], sacrebleu: [ref, '-i', sys, '-m', 'ter'] },
    ...commands.map((c) => ({ label: `${c} --help`, todeval: [c, '--help'] })),
  ];
}

interface Timed {
  ms: number;
  code: number | null;
  stdout: string;
}

/** One run to its end, timed from spawn to exit, without a shell. */
function timed(cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, code, stdout }));
  });
}

/** The base commit checked out and built in a temporary folder; returns its launcher and the cleanup. */
async function buildBase(tmp: string): Promise<{ bin: string; remove: () => Promise<void> }> {
  const dir = path.join(tmp, 'base');
  await run('git', ['worktree', 'add', '--detach', dir, BASE], { cwd: REPO });
  const remove = async () => {
    await run('git', ['worktree', 'remove', '--force', dir], { cwd: REPO }).catch(() => rmSync(dir, { recursive: true, force: true }));
  };
  try {
    symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
    await run(process.execPath, [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, maxBuffer: 1 << 26 });
  } catch (e) {
    await remove();
    throw e;
  }
  return { bin: path.join(dir, 'bin', 'todeval.js'), remove };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sec = (ms: number | undefined): string => (ms === undefined ? '' : (ms / 1000).toFixed(2));
const ratio = (a: number, b: number | undefined): string => (b === undefined ? '' : `${(a / b).toFixed(2)}x`);
const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');

async function main(): Promise<void> {
  if (distIsStale()) await buildDist();
  const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-bench-startup-'));
  let base: Awaited<ReturnType<typeof buildBase>> | undefined;
  try {
    const { ref, sys } = textFiles(tmp);
    const hasSacrebleu = existsSync(path.join(SACREBLEU_DIR, 'sacrebleu', '__init__.py')) && existsSync(SACREBLEU_PYTHON);
    if (!hasSacrebleu) console.log(`sacreBLEU: skipped (no sacrebleu/ package in ${SACREBLEU_DIR} or no ${SACREBLEU_PYTHON}; set SACREBLEU_DIR / SACREBLEU_PYTHON)`);
    console.log(`building ${BASE} in a temporary worktree...`);
    base = await buildBase(tmp);
    const ours = path.join(REPO, 'bin', 'todeval.js');
    const pyEnv = { ...process.env, PYTHONPATH: SACREBLEU_DIR };
    const table = rows(ref, sys);
    type Program = 'todeval' | 'base' | 'sacrebleu';
    const programs: Program[] = hasSacrebleu ? ['todeval', 'base', 'sacrebleu'] : ['todeval', 'base'];
    const times = table.map(() => ({ todeval: [] as number[], base: [] as number[], sacrebleu: [] as number[] }));
    const differs = new Set<string>();
    const loadBefore = load();
    console.log(`load average before: ${loadBefore}; ${ROUNDS} rounds`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, row] of table.entries()) {
        const order = programs.map((_, k) => programs[(k + round + i) % programs.length]);
        const out: Partial<Record<Program, Timed>> = {};
        for (const p of order) {
          if (p === 'sacrebleu' && !row.sacrebleu) continue;
          out[p] =
            p === 'sacrebleu'
              ? await timed(SACREBLEU_PYTHON, ['-m', 'sacrebleu', ...row.sacrebleu!], pyEnv)
              : await timed(process.execPath, [p === 'todeval' ? ours : base.bin, ...row.todeval]);
          times[i][p].push(out[p]!.ms);
        }
        if (out.todeval!.stdout !== out.base!.stdout || out.todeval!.code !== out.base!.code) differs.add(row.label);
      }
      process.stdout.write(`round ${round + 1}/${ROUNDS} (load ${load()})\n`);
    }
    const loadAfter = load();
    const lines = [
      `| command | todeval (s) | ${BASE} (s) | sacreBLEU (s) | todeval / sacreBLEU | todeval / ${BASE} |`,
      '|---|---:|---:|---:|---:|---:|',
      ...table.map((row, i) => {
        const t = median(times[i].todeval);
        const b = median(times[i].base);
        const s = times[i].sacrebleu.length ? median(times[i].sacrebleu) : undefined;
        return `| \`todeval ${row.todeval.map((a) => (a === ref ? 'REF' : a === sys ? 'SYS' : a)).join(' ')}\` | ${sec(t)} | ${sec(b)} | ${sec(s)} | ${ratio(t, s)} | ${ratio(t, b)} |`;
      }),
    ];
    const identical = differs.size === 0 ? 'yes, every row' : `NO: ${[...differs].join(', ')}`;
    const summary = [
      `Median of ${ROUNDS} interleaved rounds, wall time from spawn to exit (\`node bin/todeval.js\`, sacreBLEU 2.6.0 as`,
      `\`python3 -m sacrebleu\`), load average ${loadBefore} before and ${loadAfter} after (1, 5, 15 min),`,
      `${new Date().toISOString().slice(0, 10)}. Outputs of todeval and ${BASE} byte-identical (stdout, exit code): ${identical}.`,
    ];
    console.log(['', ...lines, '', ...summary].join('\n'));
    if (WRITE) writeTable([...lines, '', ...summary].join('\n'));
    if (differs.size > 0) process.exitCode = 1;
  } finally {
    await base?.remove();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Replaces what lies between the page's two markers with the table. */
function writeTable(table: string): void {
  const begin = '<!-- bench:startup begin -->';
  const end = '<!-- bench:startup end -->';
  const page = readFileSync(DOC, 'utf8');
  const a = page.indexOf(begin);
  const b = page.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${DOC}: no ${begin} ... ${end} markers`);
  writeFileSync(DOC, `${page.slice(0, a + begin.length)}\n${table}\n${page.slice(b)}`);
  console.log(`\nwritten to ${path.relative(REPO, DOC)}`);
}

mkdirSync(path.join(REPO, 'docs'), { recursive: true });
await main();

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../src/util/atomic-write.js';
import { runProcess } from './cli.js';
import { REPO_ROOT } from './shared.js';

/**
 * What the suites' references answer, kept by content under .cache/references/ so that the edit
 * loop does not recompute a reference that has not changed: sacreBLEU (Python) and the tokenizers
 * library's encodings (in-process: rememberedIdLists) were about a tenth of the suite's CPU time.
 *
 * sacreBLEU's answer to a request (test/helpers/sacrebleu-*.py run by a Python on a sacreBLEU
 * source) is a pure function of what its key holds:
 * - the helper scripts' bytes (every test/helpers/sacrebleu*.py: the drivers and the memo they import);
 * - every .py file of the sacreBLEU source, by path and bytes;
 * - the interpreter (its real path) and the versions it reports of Python and of the modules
 *   sacreBLEU's numbers go through (regex: the tokenizers; numpy: the paired tests; tabulate:
 *   the tables; portalocker and colorama, imported by its command line);
 * - the script's arguments and the request's bytes (the corpus, the command lines, the options).
 * Any change to one of them asks sacreBLEU again. Only an answer of a run that exited 0 is kept.
 *
 * TODEVAL_REFERENCE_MEMO=off always asks sacreBLEU and keeps nothing: .ci/run sets it, so CI's
 * comparisons are against a sacreBLEU run in that job, whatever a cache holds. Each suite's log line
 * says which it was (`how`).
 */

const CACHE = path.join(REPO_ROOT, '.cache', 'references');
const HELPERS = path.join(REPO_ROOT, 'test', 'helpers');
/** Answers kept per script: the newest few (a request changes when a test changes; older ones go). */
const KEEP_PER_SCRIPT = 6;

/** TODEVAL_REFERENCE_MEMO=off (or 0, false, no): every request asks sacreBLEU; nothing is read from or written to the cache. */
export const memoOff = (): boolean => /^(off|0|false|no)$/i.test(process.env.TODEVAL_REFERENCE_MEMO ?? '');

export interface PeerAnswer {
  code: number;
  stdout: string;
  stderr: string;
  /** 'live' (sacreBLEU ran for this request) or 'remembered' (its answer from an earlier live run with the same key). */
  how: 'live' | 'remembered';
}

function pyFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) {
      if (e.name !== '__pycache__') out.push(...pyFiles(dir, r));
    } else if (e.name.endsWith('.py')) out.push(r);
  }
  return out;
}

const VERSIONS = [
  'import sys',
  'def v(m):',
  '    try:',
  '        mod = __import__(m)',
  '        return getattr(mod, "__version__", None) or getattr(mod, "VERSION", None) or "?"',
  '    except Exception as e:',
  '        return "missing " + type(e).__name__',
  'print(sys.version, *[m + "=" + str(v(m)) for m in ("regex", "numpy", "tabulate", "portalocker", "colorama")], sep="|")',
].join('\n');

const environmentKeys = new Map<string, Promise<string>>();

/** What decides sacreBLEU's numbers besides the request: its source, our helper scripts, the interpreter and its modules. Once per process and interpreter. */
function environmentKey(python: string, sourceDir: string): Promise<string> {
  const id = `${python}\0${sourceDir}`;
  let key = environmentKeys.get(id);
  if (!key) {
    key = (async () => {
      const parts: (string | Buffer)[] = [];
      for (const f of readdirSync(HELPERS).filter((n) => /^sacrebleu.*\.py$/.test(n)).sort()) parts.push(`helper ${f}`, readFileSync(path.join(HELPERS, f)));
      for (const f of pyFiles(sourceDir)) parts.push(`source ${f}`, readFileSync(path.join(sourceDir, f)));
      let real = python;
      try {
        real = realpathSync(python);
      } catch {
        // a name on PATH: the versions below still say which Python it is
      }
      const r = await runProcess(python, ['-c', VERSIONS]);
      if (r.code !== 0) throw new Error(`${python} -c <module versions> exited ${r.code}: ${r.stderr}`);
      parts.push(`python ${real}`, r.stdout);
      return contentKey(parts);
    })();
    environmentKeys.set(id, key);
  }
  return key;
}

/**
 * `python script sourceDir ...args` with `input` on stdin: sacreBLEU's answer, from .cache/references/
 * when a live run with the same key answered before, else from a run now (kept when it exits 0).
 */
export async function sacrebleuAnswer(python: string, script: string, sourceDir: string, input: string, args: string[] = [], cache = CACHE): Promise<PeerAnswer> {
  const live = async (): Promise<PeerAnswer> => {
    const r = await runProcess(python, [script, sourceDir, ...args], { input });
    return { code: r.code ?? 1, stdout: r.stdout, stderr: r.stderr, how: 'live' };
  };
  if (memoOff()) return live();
  const name = path.basename(script, '.py');
  const key = contentKey([await environmentKey(python, sourceDir), name, JSON.stringify(args), readFileSync(script), input]);
  const file = path.join(cache, `${name}-${key}.json`);
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { stdout: string };
    return { code: 0, stdout: kept.stdout, stderr: '', how: 'remembered' };
  } catch {
    // not kept yet (or unreadable): ask sacreBLEU
  }
  const answer = await live();
  if (answer.code === 0) {
    mkdirSync(cache, { recursive: true });
    // Whole or not at all (another test file may read it meanwhile).
    writeFileAtomic(file, JSON.stringify({ stdout: answer.stdout }));
    prune(cache, name, '.json');
  }
  return answer;
}

/**
 * Keeps the newest KEEP_PER_SCRIPT entries NAME-<key>EXT (EXT undefined: folders, whose names have
 * no dot; a folder being written is NAME-<key>.<pid>.partial). Files being written start with a dot
 * (writeFileAtomic), so they never match.
 */
function prune(cache: string, name: string, ext: string | undefined): void {
  const mine = readdirSync(cache)
    .filter((f) => f.startsWith(`${name}-`) && (ext === undefined ? !f.includes('.') : f.endsWith(ext)))
    .map((f) => ({ f, t: statSync(path.join(cache, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { f } of mine.slice(KEEP_PER_SCRIPT)) rmSync(path.join(cache, f), { recursive: true, force: true });
}

/**
 * A folder holding `files` (name -> bytes) for sacreBLEU and us to read. With the memo on, it is
 * .cache/references/NAME-<digest of the files>/, the same path in every run with the same files: the
 * command lines (and so sacreBLEU's answers, whose tables print the file names) are the same from
 * one run to the next, which a fresh temp folder's random name would change. Written whole (aside,
 * then renamed), never written again, so concurrent runs share it safely. With the memo off, a
 * fresh folder from `makeTemp` (the caller's tempDir, removed with its test file).
 */
export function inputFolder(name: string, files: Map<string, string | Buffer>, makeTemp: () => string, cache = CACHE): string {
  const write = (dir: string) => {
    for (const [f, bytes] of files) writeFileSync(path.join(dir, f), bytes);
  };
  if (memoOff()) {
    const dir = makeTemp();
    write(dir);
    return dir;
  }
  const key = contentKey([...files].sort(([a], [b]) => (a < b ? -1 : 1)).flat());
  const dir = path.join(cache, `${name}-inputs-${key}`);
  if (existsSync(dir)) return dir;
  const partial = `${dir}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  write(partial);
  try {
    renameSync(partial, dir);
  } catch (e) {
    // Another run made it meanwhile (a rename onto a non-empty folder fails): theirs holds the same bytes.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(dir)) throw e;
  }
  prune(cache, `${name}-inputs`, undefined);
  return dir;
}

/** A hex digest of `parts`, each length-prefixed (so no two lists of parts give the same bytes). */
export function contentKey(parts: Iterable<string | Buffer>): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(`${Buffer.byteLength(p)}\0`).update(p);
  return h.digest('hex').slice(0, 32);
}

/**
 * Lists of token ids an in-process reference (a library) computed for `key`, kept as
 * .cache/references/NAME-KEY.bin by rememberIdLists; undefined when none is kept or the memo is off.
 * The caller's key must hold all that decides the lists (the library's code, its inputs, the runtime).
 */
export function rememberedIdLists(name: string, key: string, cache = CACHE): number[][] | undefined {
  if (memoOff()) return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path.join(cache, `${name}-${key}.bin`));
  } catch {
    return undefined;
  }
  // Int32 little-endian: n, then n lengths, then the ids one list after another. A file that is
  // not that (cut short, damaged) gives undefined: the caller asks the reference again.
  if (bytes.byteLength < 4 || bytes.byteLength % 4 !== 0) return undefined;
  const all = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const n = all[0];
  if (n < 0 || 1 + n > all.length) return undefined;
  const lists: number[][] = new Array(n);
  let at = 1 + n;
  for (let i = 0; i < n; i++) {
    const len = all[1 + i];
    if (len < 0 || at + len > all.length) return undefined;
    const ids = new Array<number>(len);
    for (let k = 0; k < len; k++) ids[k] = all[at + k];
    lists[i] = ids;
    at += len;
  }
  if (at !== all.length) return undefined; // not what rememberIdLists wrote: ask the reference
  return lists;
}

/** Keeps `lists` for rememberedIdLists (whole or not at all); nothing when the memo is off. */
export function rememberIdLists(name: string, key: string, lists: number[][], cache = CACHE): void {
  if (memoOff()) return;
  let total = 1 + lists.length;
  for (const l of lists) total += l.length;
  const all = new Int32Array(total);
  all[0] = lists.length;
  let at = 1 + lists.length;
  lists.forEach((l, i) => {
    all[1 + i] = l.length;
    all.set(l, at);
    at += l.length;
  });
  mkdirSync(cache, { recursive: true });
  writeFileAtomic(path.join(cache, `${name}-${key}.bin`), new Uint8Array(all.buffer));
  prune(cache, name, '.bin');
}

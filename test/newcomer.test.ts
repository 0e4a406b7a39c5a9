// The rest of a newcomer's list (issue 21): each case is what a first run of the CLI met, run the
// way the newcomer ran it, and failed before its fix.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_ARGV, runCli, type CliResult } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { tempDir } from './helpers/temp.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';

const dir = tempDir('newcomer');
const f = (name: string) => path.join(dir, name);
const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');
const miniData = ['--dataset', 'sgd', '--dialogues', path.join(MINI, 'dialogues.json'), '--schema', path.join(MINI, 'schema.json')];

/** Bad input: exit 2, exactly one line on stderr, and that line. */
function oneLine(r: CliResult, line: string | RegExp): void {
  const lines = r.stderr.split('\n').filter((l) => l !== '' && !/CUDA execution provider/.test(l));
  expect(lines).toEqual([typeof line === 'string' ? line : expect.stringMatching(line)]);
  expect(r.code).toBe(2);
}

describe('--allow-missing with predictions that match no turn', () => {
  writeFileSync(f('nomatch.jsonl'), ['{"id": "mini_009/1", "utterance": "Hi."}', '{"id": "mini_001:1", "utterance": "Yes."}'].join('\n') + '\n');
  const refused = new RegExp(`^todeval: ${f('nomatch.jsonl')}: all 9 turns of sgd:\\S+ have no prediction, nothing to score: 2 prediction ids match no turn`);

  it('ser: one line, exit 2 (was: a report over 0 turns, exit 0)', async () => {
    oneLine(await runCli(['ser', ...miniData, '-i', f('nomatch.jsonl'), '--allow-missing']), refused);
  });

  it('score: one line, exit 2, and no report (was: a 0-turn report, exit 0)', async () => {
    const r = await runCli(['score', ...miniData, '-i', f('nomatch.jsonl'), '--allow-missing', '--model', getLexicalStandinDir(), '--device', 'cpu', '-o', f('nomatch.json')]);
    oneLine(r, refused);
    expect(r.stdout).toBe('');
  }, 60_000);
});

describe('every output path is written to for real (a probe file created and removed) before any work, on every command', () => {
  // A name longer than the file system takes: access(2) says yes to it (and to root for any folder),
  // so it was found only when the run saved its results, after the work.
  const long = (ext: string) => f(`${'r'.repeat(260)}${ext}`);
  const tooLong = (flag: string, file: string) => `todeval: ${file}: ${flag}: cannot write here (file name too long)`;
  const shared = hasData('multiwoz', 'predictions') && hasData('gcdf1', 'convlab_baselines', 'test');
  const model = () => getLexicalStandinDir();
  const cases: { name: string; flag: string; file: string; args: () => string[]; needsShared?: boolean }[] = [
    { name: 'score -o', flag: '-o/--output', file: long('.json'), args: () => ['score', ...miniData, '--model', model(), '--device', 'cpu', '--turns', f('probe.turns.jsonl'), '-o', long('.json')] },
    { name: 'score --turns', flag: '--turns', file: long('.jsonl'), args: () => ['score', ...miniData, '--model', model(), '--device', 'cpu', '--turns', long('.jsonl')] },
    { name: 'rerank -o', flag: '-o/--output', file: long('.json'), args: () => ['rerank', '-i', path.join(MINI, 'rerank.jsonl'), ...miniData, '--model', model(), '--device', 'cpu', '-o', long('.json')] },
    { name: 'ser -o', flag: '-o/--output', file: long('.json'), args: () => ['ser', ...miniData, '-o', long('.json')] },
    // The references fit; the signature written beside them (NAME.signature.json) does not.
    { name: 'refs -o (its .signature.json)', flag: '-o/--output signature', file: `${f('s'.repeat(240))}.jsonl.signature.json`, args: () => ['refs', ...miniData, '-o', `${f('s'.repeat(240))}.jsonl`] },
    { name: 'report -o', flag: '-o/--output', file: long('.html'), args: () => ['report', f('run.json'), '-o', long('.html')] },
    { name: 'merge -o', flag: '-o/--output', file: long('.json'), args: () => ['merge', f('part.json'), '-o', long('.json')] },
    { name: 'nli --cache', flag: '--cache', file: long('.jsonl'), args: () => ['nli', 'The cake is lemon.', 'It is a lemon cake.', '--model', model(), '--device', 'cpu', '--cache', long('.jsonl')] },
    { name: 'serve --references', flag: '--references', file: long('.jsonl'), args: () => ['serve', ...miniData, '--model', '/no/model/here', '--port', '0', '--references', long('.jsonl')] },
    {
      name: 'evaluate -o',
      flag: '-o/--output',
      file: long('.json'),
      needsShared: true,
      args: () => ['evaluate', '-i', path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json'), '--limit', '2', '--data-dir', DATA_DIR, '-o', long('.json')],
    },
    {
      name: 'gcdf1 --per-dialogue',
      flag: '--per-dialogue',
      file: long('.json'),
      needsShared: true,
      args: () => ['gcdf1', '-d', path.join(DATA_DIR, 'gcdf1', 'convlab_baselines', 'test'), '--no-canonical-map', '--limit', '2', '--per-dialogue', long('.json')],
    },
  ];
  for (const c of cases) {
    it.skipIf(c.needsShared && !shared)(`${c.name}: one line naming the flag, exit 2, nothing written`, async () => {
      const r = await runCli(c.args());
      oneLine(r, tooLong(c.flag, c.file));
      expect(r.stdout).toBe('');
      expect(existsSync(f('probe.turns.jsonl'))).toBe(false);
      expect(readdirSync(dir).filter((n) => n.startsWith('.') || n.length > 200)).toEqual([]);
    }, 60_000);
  }

  it('data pull and models pull check the folder they download into', async () => {
    writeFileSync(f('a-file'), '');
    oneLine(await runCli(['data', 'pull', '--data-dir', f('a-file/data')]), `todeval: ${f('a-file/data')}: --data-dir: cannot write here (${f('a-file')} is not a folder)`);
    oneLine(await runCli(['models', 'pull', '--cache-dir', f('a-file/hub')]), `todeval: ${f('a-file/hub')}: --cache-dir: cannot write here (${f('a-file')} is not a folder)`);
  }, 60_000);
});

describe('report without -o', () => {
  it('says where it wrote the page (was: report.html in the working folder, named as if given)', async () => {
    const run = await runCli(['score', ...miniData, '--model', getLexicalStandinDir(), '--device', 'cpu', '-o', f('run.json')]);
    expect(run.code).toBe(0);
    const cwd = mkdtempSync(path.join(dir, 'cwd-'));
    // From another working folder, as a user runs it.
    const r = await promisify(execFile)(process.execPath, [...CLI_ARGV, 'report', f('run.json')], { cwd });
    expect(r.stdout).toMatch(new RegExp(`^report: ${path.join(cwd, 'report.html').replaceAll('.', '\\.')} \\(no -o given: report\\.html in the working folder\\) \\(\\d+\\.\\d\\d MiB; 1 run,`));
    expect(existsSync(path.join(cwd, 'report.html'))).toBe(true);
  }, 60_000);
});

describe('flag values are checked before any data or model loads, each with its own line', () => {
  // The model named does not exist: a check that came after loading would print that instead.
  const serve = (...args: string[]) => runCli(['serve', ...miniData, '--model', '/no/model/here', ...args]);
  const invalid = (flag: string, value: string, why: string) => `error: option '${flag}' argument '${value}' is invalid. ${why}`;

  it('--split names a split (was: "run `todeval data pull`" for a typo)', async () => {
    oneLine(await runCli(['ser', '--dataset', 'sgd', '--split', 'foo']), invalid('--split <split>', 'foo', '--split must be train, dev or test'));
  });

  it('--port is a port number (was: Node\'s RangeError after the model loaded)', async () => {
    oneLine(await serve('--port', '99999'), invalid('--port <n>', '99999', '--port must be a port number from 0 to 65535 (0: any free port)'));
  });

  it('--host is an address or a host name, and one of this machine', async () => {
    const token = ['--token', 'a-token-of-16-chars'];
    oneLine(await serve('--host', 'not a host!', ...token), invalid('--host <host>', 'not a host!', '--host must be an IP address or a host name'));
    // 203.0.113.0/24 is TEST-NET-3: never an address of this machine.
    oneLine(await serve('--host', '203.0.113.7', '--port', '0', ...token), 'todeval: --host 203.0.113.7 is not an address of this machine');
  });

  it('a port in use is named before the model loads', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (busy.address() as AddressInfo).port;
      oneLine(await serve('--port', String(port)), `todeval: --port ${port} is in use on 127.0.0.1; pick another, or 0 for any free port`);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });

  it('sizes: within what the runtime can hold (was: accepted, then every request answered 503 at once, or bodies that fail once read)', async () => {
    oneLine(await serve('--timeout-ms', '3000000000'), invalid('--timeout-ms <n>', '3000000000', '--timeout-ms must be at most 2147483647 (the longest timer Node keeps, about 24.8 days)'));
    oneLine(await serve('--max-body-bytes', '99999999999'), new RegExp(`^${invalid('--max-body-bytes <n>', '99999999999', '--max-body-bytes must be at most \\d+ \\(the longest string JSON.parse can read\\)')}$`));
  });
});

describe('rerank: two candidates of one system in an item', () => {
  it('one line naming the file, the line and the item, exit 2 (was: accepted, the system counted twice)', async () => {
    writeFileSync(
      f('dup.jsonl'),
      [
        { id: 'ok', dataset_id: 'mini_001/3', candidates: [{ system: 'a', text: 'Lemon, Saturday?' }, { system: 'b', text: 'Saturday?' }] },
        { id: 'twice', dataset_id: 'mini_001/5', candidates: [{ system: 'a', text: 'Done.' }, { system: 'b', text: 'Placed.' }, { system: 'a', text: 'Ordered.' }] },
      ].map((i) => JSON.stringify(i)).join('\n') + '\n',
    );
    const r = await runCli(['rerank', '-i', f('dup.jsonl'), ...miniData, '--model', getLexicalStandinDir(), '--device', 'cpu']);
    oneLine(r, `todeval: ${f('dup.jsonl')}: line 2 (item twice): item "twice" has two candidates of system "a"; give each system one candidate per item`);
  }, 60_000);
});

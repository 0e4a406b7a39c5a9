// Regression tests for defects found by using every command as a demanding user would: each case
// failed (wrong exit code, stack-trace-ish message, or an unresumable file) before its fix.
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import PQueue from 'p-queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threadCount } from '../src/cli/nli-options.js';
import { positiveInt } from '../src/cli/options.js';
import { loadPredictions } from '../src/metrics/predictions-file.js';
import { PairCache } from '../src/nli/pair-cache.js';
import { InputError } from '../src/util/errors.js';
import { repairJsonlTail } from '../src/util/jsonl-append.js';
import { CLI_ARGV } from './helpers/cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

// The cases are independent (each its own temp folder and files), so every suite here is concurrent:
// one case's command starts while another's runs. At most three commands of this file run at once,
// so a loaded CI box is not handed the whole file's processes together.
const commands = new PQueue({ concurrency: 3 });

const cli = (args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> =>
  commands.add(() =>
    promisify(execFile)(process.execPath, [...CLI_ARGV, ...args], {
      cwd: REPO_ROOT,
      maxBuffer: 1 << 26,
      env: { ...process.env, ...env },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    ),
  );

const tmps: string[] = [];
const tmp = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'todeval-qa-'));
  tmps.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of tmps) rmSync(d, { recursive: true, force: true });
});

/** The promise for bad input: exit 2, one line on stderr, no stack trace. */
function expectOneLineError(r: { code: number; stderr: string }, ...parts: string[]): void {
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n').filter((l) => !/CUDA execution provider/.test(l));
  expect(lines).toHaveLength(1);
  expect(lines[0]).not.toMatch(/\n\s+at |TODEVAL_DEBUG/);
  for (const p of parts) expect(lines[0]).toContain(p);
}

describe.concurrent('progress bar and Ctrl-C', () => {
  it('the bar stops on process exit, restoring line wrapping (was: a Ctrl-C left the terminal without wrapping)', async () => {
    // a child process, so exiting is real: stderr posing as a terminal, a bar started, then exit(130)
    const r = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', `
      Object.defineProperty(process.stderr, 'isTTY', { value: true });
      const { progressBar } = await import('./dist/src/util/progress/bar.js');
      progressBar('qa |{bar}| {value}/{total}').start(10, 3);
      process.exit(130);
    `], { cwd: REPO_ROOT }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(130);
    const on = r.stderr.indexOf('\x1b[?7l');
    expect(on).toBeGreaterThan(-1);
    expect(r.stderr.indexOf('\x1b[?7h')).toBeGreaterThan(on);
  }, 90_000);

  it('Ctrl-C exits 130 through process.exit (was: killed by the signal, so no exit hooks ran)', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      process.argv = [process.argv[0], 'todeval', 'models', 'list', '--cache-dir', ${JSON.stringify(tmp())}];
      process.on('exit', (code) => process.stdout.write('exit hook ran ' + code + '\\n'));
      await import('./dist/src/cli/main.js');
      setInterval(() => {}, 1000);
      process.stdout.write('ready\\n');
    `], { cwd: REPO_ROOT });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(out).toContain('exit hook ran 130');
  }, 90_000);
});

describe.concurrent('count flags take decimal digits only', () => {
  it.each(['0x10', '1e3', ' 7', '99999999999999999999'])('--limit %j is refused (was: read as a number)', (v) => {
    expect(() => positiveInt('--limit')(v)).toThrow('--limit must be a positive integer');
  });
});

describe.concurrent('--threads is at most the CPU cores', () => {
  it('a slip like 100000 is refused at once (was: minutes creating threads, no output)', () => {
    const cores = availableParallelism();
    expect(threadCount(String(cores))).toBe(cores);
    expect(() => threadCount(String(cores + 1))).toThrow(`--threads must be at most ${cores}`);
    expect(() => threadCount('100000')).toThrow('--threads must be at most');
    expect(() => threadCount('0')).toThrow('--threads must be a positive integer');
  });
});

describe.concurrent('append-only JSONL files survive a run killed mid-write', () => {
  it('a torn tail is cut off, a complete last record only gets its newline', () => {
    const dir = tmp();
    const torn = path.join(dir, 'torn.jsonl');
    writeFileSync(torn, '{"a":1}\n{"b":');
    expect(repairJsonlTail(torn, readFileSync(torn, 'utf8'))).toBe('{"a":1}\n');
    expect(readFileSync(torn, 'utf8')).toBe('{"a":1}\n');
    const whole = path.join(dir, 'whole.jsonl');
    writeFileSync(whole, '{"a":1}\n{"b":2}');
    expect(repairJsonlTail(whole, readFileSync(whole, 'utf8'))).toBe('{"a":1}\n{"b":2}\n');
    expect(readFileSync(whole, 'utf8')).toBe('{"a":1}\n{"b":2}\n');
    const onlyTorn = path.join(dir, 'first-write-killed.jsonl');
    writeFileSync(onlyTorn, '{"m":"k","p":');
    expect(repairJsonlTail(onlyTorn, readFileSync(onlyTorn, 'utf8'))).toBe('');
  });

  it("leaves alone a file that is not JSON lines (someone's pretty-printed JSON given as --out)", () => {
    const file = path.join(tmp(), 'dialogues.json');
    const pretty = JSON.stringify([{ dialogue_id: 'x' }], null, 2);
    writeFileSync(file, pretty);
    expect(repairJsonlTail(file, pretty)).toBe(pretty);
    expect(readFileSync(file, 'utf8')).toBe(pretty);
  });

  it("leaves alone someone's one-line JSON without a final newline (was: a newline appended to it before the refusal)", () => {
    const file = path.join(tmp(), 'settings.json');
    const minified = JSON.stringify({ name: 'my settings', threads: 4 });
    writeFileSync(file, minified);
    const isStoreHeader = (h: Record<string, unknown>) => typeof h.kind === 'string' && typeof h.digest === 'string';
    expect(repairJsonlTail(file, minified, isStoreHeader)).toBe(minified);
    expect(readFileSync(file, 'utf8')).toBe(minified);
  });

  it('the NLI cache is written as it grows, not only at the end (was: a killed run kept none of its pairs)', () => {
    const file = path.join(tmp(), 'cache.jsonl');
    const cache = new PairCache('k', file);
    const n = PairCache.FLUSH_EVERY + 10;
    for (let i = 0; i < n; i++) cache.set(`p${i}`, 'h', { entailment: 1, neutral: 0, contradiction: 0 });
    // no flush(), no close(): as if the process died here
    expect(new PairCache('k', file).size).toBe(PairCache.FLUSH_EVERY);
    expect(cache.flush()).toBe(10);
    expect(new PairCache('k', file).size).toBe(n);
  });

  it('the NLI cache appends its last pairs when the process exits (was: up to 255 pairs lost on Ctrl-C)', async () => {
    const file = path.join(tmp(), 'cache.jsonl');
    const r = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', `
      const { PairCache } = await import('./dist/src/nli/pair-cache.js');
      const cache = new PairCache('k', ${JSON.stringify(file)});
      for (let i = 0; i < 10; i++) cache.set('p' + i, 'h', { entailment: 1, neutral: 0, contradiction: 0 });
      process.exit(130);
    `], { cwd: REPO_ROOT }).then(
      () => ({ code: 0 }),
      (e: { code: number }) => e,
    );
    expect(r.code).toBe(130);
    expect(new PairCache('k', file).size).toBe(10);
  }, 90_000);

  it('the NLI cache stays readable after appending to a torn file (was: corrupt on the next run)', () => {
    const file = path.join(tmp(), 'cache.jsonl');
    writeFileSync(file, `${JSON.stringify({ m: 'k', p: 'a', h: 'b', e: 1, n: 0, c: 0 })}\n{"m":"k","p":`);
    const first = new PairCache('k', file);
    first.set('p2', 'h2', { entailment: 0.1, neutral: 0.2, contradiction: 0.7 });
    first.flush();
    const again = new PairCache('k', file);
    expect(again.size).toBe(2);
    expect(again.get('p2', 'h2')?.contradiction).toBe(0.7);
  });
});

describe.concurrent('system errors become one line naming the path', () => {
  it('gcdf1 --dialogues given a file', async () => {
    const file = path.join(tmp(), 'dialogues_001.json');
    writeFileSync(file, '[]');
    // --no-canonical-map: the map lives in the data dir, which this test must not need.
    expectOneLineError(await cli(['gcdf1', '--dialogues', file, '--no-canonical-map']), file, 'not a directory');
  });

  it('an output file in a folder that does not exist (was: unhandled stream error, exit 1)', async () => {
    const out = path.join(tmp(), 'no', 'such', 'refs.jsonl');
    const input = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json');
    const schema = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json');
    expectOneLineError(await cli(['refs', '--input', input, '--schema', schema, '--out', out]), out, 'no such file or directory');
  });

  it('--cache given a folder names it (readFileSync on a folder does not)', () => {
    const dir = tmp();
    let err: unknown;
    try {
      new PairCache('k', dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).oneLine()).toMatch(new RegExp(`^${dir}: is a directory`));
  });

  it('gcdf1 names the canonical map it looked for under --data-dir (was: "set --data-dir", which was set)', async () => {
    const data = tmp();
    const dialogues = path.join(tmp(), 'convs');
    mkdirSync(dialogues);
    writeFileSync(path.join(dialogues, 'dialogues_001.json'), '[]');
    const r = await cli(['gcdf1', '-d', dialogues, '--data-dir', data]);
    expectOneLineError(r, path.join(data, 'gcdf1', 'resources', 'multiwoz21_canonical_map.json'), '--no-canonical-map');
    expect(r.stderr).not.toContain('set --data-dir');
  });

  it('a folder given as a JSON file says so in words (was: "cannot read file (EISDIR)")', async () => {
    const dir = tmp();
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    expectOneLineError(await cli(['refs', '--dialogues', path.join(mini, 'dialogues.json'), '--schema', dir]), `${dir}: cannot read file: is a directory, expected a file`);
    const ser = ['ser', '--dataset', 'sgd', '--dialogues', path.join(mini, 'dialogues.json'), '--schema', path.join(mini, 'schema.json')];
    expectOneLineError(await cli([...ser, '--predictions', dir]), `${dir}: cannot read predictions: is a directory, expected a file`);
  });

  it('models list --cache-dir given a file', async () => {
    const file = path.join(tmp(), 'cache');
    writeFileSync(file, '');
    expectOneLineError(await cli(['models', 'list', '--cache-dir', file]), file, 'not a directory');
  });
});

describe.concurrent('act names no rule knows are bad input, not silently unscored actions', () => {
  const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');

  it('an SGD dialogue with an act SGD does not have (was: counted under "no rule", exit 0)', async () => {
    const dialogues = JSON.parse(readFileSync(path.join(mini, 'dialogues.json'), 'utf8')) as { turns: { frames: { actions: { act: string }[] }[] }[] }[];
    dialogues[0].turns[1].frames[0].actions[0].act = 'REQUETS';
    const file = path.join(tmp(), 'dialogues.json');
    writeFileSync(file, JSON.stringify(dialogues));
    const args = ['refs', '--input', file, '--schema', path.join(mini, 'schema.json'), '--summary'];
    expectOneLineError(await cli(args), file, 'mini_001/1', 'unknown SGD system act "REQUETS"');
    const skipped = await cli([...args, '--skip-invalid']);
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toContain('REQUETS');
    expect(skipped.stdout).not.toContain('REQUETS');
  });
});

describe.skipIf(!hasData('sgd', 'test', 'schema.json')).concurrent('generic JSONL turns', () => {
  it('--skip-invalid lists a line that is not JSON and a repeated id, and goes on (was: exit 2 on the bad line; duplicates kept)', async () => {
    const file = path.join(tmp(), 'turns.jsonl');
    const turn = (id: string, utterance: string) =>
      JSON.stringify({ id, service: 'Restaurants_2', actions: [{ act: 'INFORM', slot: 'location', values: ['San Jose'] }], utterance });
    writeFileSync(file, [turn('d1/1', 'In San Jose.'), '{"id": "d1/3", "serv', turn('d1/1', 'Again.'), turn('d1/5', 'San Jose it is.')].join('\n') + '\n');
    const args = ['refs', '--dataset', 'generic', '--dialogues', file, '--schema', path.join(DATA_DIR, 'sgd', 'test', 'schema.json')];
    expectOneLineError(await cli(args), file, 'line 2', 'not valid JSON');
    const r = await cli([...args, '--skip-invalid']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${file}: line 2: not valid JSON`);
    expect(r.stderr).toContain(`${file}: line 3 (d1/1): duplicate turn id "d1/1" (first on line 1)`);
    expect(r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['d1/1', 'd1/5']);
  });

  it('an act neither SGD nor MultiWOZ has is invalid (was: kept with no rule and no reference)', async () => {
    const file = path.join(tmp(), 'turns.jsonl');
    const turn = (id: string, act: string) =>
      JSON.stringify({ id, service: 'Restaurants_2', actions: [{ act, slot: 'location', values: ['San Jose'] }], utterance: 'In San Jose.' });
    writeFileSync(file, `${turn('d1/1', 'INFORM')}\n${turn('d1/3', 'INFROM')}\n`);
    const args = ['refs', '--dataset', 'generic', '--dialogues', file, '--schema', path.join(DATA_DIR, 'sgd', 'test', 'schema.json')];
    expectOneLineError(await cli(args), file, 'line 2 (d1/3)', 'unknown act "INFROM"');
  });
});

describe.concurrent('UTF-8 files saved with a byte-order mark', () => {
  it('are read like any other (was: "not valid JSON (Unexpected token \'\ufeff\'")', async () => {
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const dir = tmp();
    const bom = (name: string, text: string): string => {
      writeFileSync(path.join(dir, name), `\ufeff${text}`);
      return path.join(dir, name);
    };
    const dialogues = bom('dialogues.json', readFileSync(path.join(mini, 'dialogues.json'), 'utf8'));
    const schema = bom('schema.json', readFileSync(path.join(mini, 'schema.json'), 'utf8'));
    const plain = await cli(['ser', '--dataset', 'sgd', '--dialogues', path.join(mini, 'dialogues.json'), '--schema', path.join(mini, 'schema.json')]);
    const r = await cli(['ser', '--dataset', 'sgd', '--dialogues', dialogues, '--schema', schema]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(plain.stdout.split('\n')[0]);
    const refs = await cli(['refs', '--dialogues', dialogues, '--schema', schema]);
    const ids = [...new Set(refs.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id))];
    const preds = bom('preds.jsonl', ids.map((id) => JSON.stringify({ id, utterance: 'Sure.' })).join('\n'));
    const withPreds = await cli(['ser', '--dataset', 'sgd', '--dialogues', dialogues, '--schema', schema, '--predictions', preds]);
    expect(withPreds.code).toBe(0);
  });
});

describe.concurrent('predictions in the wrong layout', () => {
  it("mwzeval's dialogue -> turns file given to ser gets a pointer to evaluate (was: \"must be array\")", () => {
    const file = path.join(tmp(), 'mwzeval.json');
    writeFileSync(file, JSON.stringify({ sng0073: [{ response: 'hello' }] }));
    expect(() => loadPredictions(file)).toThrow(/"sng0073" maps to a list: this looks like mwzeval's format .*todeval evaluate/);
    writeFileSync(file, JSON.stringify({ 'd/1': 'fine', 'd/3': 3 }));
    expect(() => loadPredictions(file)).toThrow('"d/3" must map to an utterance string');
  });
});

describe.concurrent('nothing to evaluate is an error, not a score over nothing', () => {
  it('SGD speakers spelt "system"/"user": each turn is named, and an empty result exits 2 (was: "SER 0.00% ... 0 system turns", exit 0)', async () => {
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const dialogues = JSON.parse(readFileSync(path.join(mini, 'dialogues.json'), 'utf8')) as { turns: { speaker: string }[] }[];
    for (const d of dialogues) for (const t of d.turns) t.speaker = t.speaker.toLowerCase();
    const file = path.join(tmp(), 'dialogues.json');
    writeFileSync(file, JSON.stringify(dialogues));
    const args = ['ser', '--dataset', 'sgd', '--dialogues', file, '--schema', path.join(mini, 'schema.json')];
    expectOneLineError(await cli(args), file, 'mini_001/0', 'speaker must be "USER" or "SYSTEM", got "user"');
    const skipped = await cli([...args, '--skip-invalid']);
    expect(skipped.code).toBe(2);
    expect(skipped.stdout).toBe('');
    expect(skipped.stderr.trim().split('\n').at(-1)).toMatch(/nothing to evaluate: all \d+ invalid items were skipped$/);
  });
});

describe.concurrent('empty inputs to gcdf1 and rerank', () => {
  it('gcdf1 over no dialogues exits 2 (was: an empty table, exit 0)', async () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'dialogues_001.json'), '[]');
    expectOneLineError(await cli(['gcdf1', '-d', dir, '--no-canonical-map']), dir, 'nothing to evaluate: no dialogues in the files');
  });

  it('rerank over no items exits 2 (was: "rerank: 0 items", exit 0)', async () => {
    const file = path.join(tmp(), 'items.jsonl');
    writeFileSync(file, '\n');
    // The example's schema and dialogues, so no data dir is needed (nor looked up beside the cwd).
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const own = ['--schema', path.join(mini, 'schema.json'), '--dialogues', path.join(mini, 'dialogues.json')];
    expectOneLineError(await cli(['rerank', '-i', file, ...own, '--model', '/nonexistent']), file, 'nothing to rerank: no items in the file');
  });
});

describe.concurrent('SGD dialogue shape', () => {
  it('a dialogue whose turns are not a list is named by its id (was: "dialogue #0 ... without dialogue_id/turns")', async () => {
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const dialogues = JSON.parse(readFileSync(path.join(mini, 'dialogues.json'), 'utf8')) as { turns: unknown }[];
    dialogues[0].turns = 'oops';
    const file = path.join(tmp(), 'dialogues.json');
    writeFileSync(file, JSON.stringify(dialogues));
    expectOneLineError(await cli(['refs', '--dialogues', file, '--schema', path.join(mini, 'schema.json')]), `${file}: mini_001: `, '"turns" must be a list');
  });
});

describe.concurrent('an output that names an input is refused before any work', () => {
  it('evaluate -i x -o x, refs --out <dialogues>, ser -o <predictions> (was: the input overwritten by the report)', async () => {
    const dir = tmp();
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const dialogues = path.join(dir, 'dialogues.json');
    const body = readFileSync(path.join(mini, 'dialogues.json'), 'utf8');
    writeFileSync(dialogues, body);
    const schema = path.join(mini, 'schema.json');
    expectOneLineError(await cli(['refs', '--dialogues', dialogues, '--schema', schema, '--out', dialogues]), dialogues, '-o/--output would overwrite the --dialogues file');
    expect(readFileSync(dialogues, 'utf8')).toBe(body);

    const preds = path.join(dir, 'preds.jsonl');
    writeFileSync(preds, '{"id": "mini_001/1", "utterance": "Sure."}\n');
    expectOneLineError(await cli(['ser', '--dataset', 'sgd', '--dialogues', dialogues, '--schema', schema, '--predictions', preds, '-o', preds]), preds, '-o/--output would overwrite the -i/--input file');
    expect(readFileSync(preds, 'utf8')).toBe('{"id": "mini_001/1", "utterance": "Sure."}\n');

    const mwz = path.join(dir, 'mwz.json');
    writeFileSync(mwz, '{}');
    expectOneLineError(await cli(['evaluate', '-i', mwz, '-o', path.join(dir, '.', 'mwz.json')]), '-o/--output would overwrite the --input file');
    expect(readFileSync(mwz, 'utf8')).toBe('{}');

    const out = path.join(dir, 'same.jsonl');
    expectOneLineError(await cli(['score', '--dataset', 'sgd', '--dialogues', dialogues, '--schema', schema, '--out', out, '-o', out, '--model', '/nonexistent']), '-o/--output and --turns name the same file');
  });
});

describe.concurrent('SGD folders', () => {
  it('a dialogue id in two files is invalid (was: its turns counted twice)', async () => {
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const dir = tmp();
    const body = readFileSync(path.join(mini, 'dialogues.json'), 'utf8');
    writeFileSync(path.join(dir, 'dialogues_001.json'), body);
    writeFileSync(path.join(dir, 'dialogues_002.json'), body);
    const args = ['refs', '--dialogues', dir, '--schema', path.join(mini, 'schema.json')];
    expectOneLineError(await cli(args), path.join(dir, 'dialogues_002.json'), 'mini_001', 'duplicate dialogue id');
    const once = await cli(['refs', '--dialogues', path.join(mini, 'dialogues.json'), '--schema', path.join(mini, 'schema.json')]);
    const skipped = await cli([...args, '--skip-invalid']);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toBe(once.stdout);
  });
});

describe.concurrent('data pull writes where the other commands look', () => {
  it('$TODEVAL_DATA is the default target (was: always ./data, which the others read only after it)', async () => {
    const dir = tmp();
    const manifest = path.join(dir, 'manifest.json');
    writeFileSync(manifest, JSON.stringify({ datasets: { none: { files: [] } } }));
    const target = path.join(dir, 'data-here');
    const r = await cli(['data', 'pull', '--manifest', manifest], { TODEVAL_DATA: target });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`in ${target}\n`);
  });
});

describe.skipIf(!hasData('multiwoz', 'predictions', 'damd.json')).concurrent('evaluate input: domain names', () => {
  it('an unknown domain in active_domains or state names the turn (was: silently ignored by the metrics)', async () => {
    const all = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'augpt.json'), 'utf8')) as Record<string, { active_domains?: string[]; state?: object }[]>;
    const [id, turns] = Object.entries(all)[0];
    const dir = tmp();
    const typo = path.join(dir, 'typo.json');
    writeFileSync(typo, JSON.stringify({ [id]: turns.map((t, i) => (i === 1 ? { ...t, active_domains: ['hotels'] } : t)) }));
    expectOneLineError(await cli(['evaluate', '-i', typo, '-s', '--data-dir', DATA_DIR]), typo, `${id}/turn 1`, '"hotels"');
    const state = path.join(dir, 'state.json');
    writeFileSync(state, JSON.stringify({ [id]: turns.map((t, i) => (i === 0 ? { ...t, state: { resturant: { food: 'thai' } } } : t)) }));
    expectOneLineError(await cli(['evaluate', '-i', state, '--dst', '--data-dir', DATA_DIR]), state, `${id}/turn 0`, '"resturant"');
  });
});

describe.skipIf(!hasData('multiwoz', 'predictions', 'damd.json')).concurrent('evaluate tables', () => {
  it('list `total` after the domains (was: sorted in among them, between taxi and train)', async () => {
    const all = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json'), 'utf8')) as Record<string, unknown>;
    const file = path.join(tmp(), 'damd-30.json');
    writeFileSync(file, JSON.stringify(Object.fromEntries(Object.entries(all).slice(0, 30))));
    const r = await cli(['evaluate', '-i', file, '-s', '--data-dir', DATA_DIR]);
    expect(r.code).toBe(0);
    const blocks = r.stdout.split('\n\n').filter((b) => b.includes('INFORM & SUCCESS'));
    expect(blocks).toHaveLength(2);
    for (const b of blocks) {
      const rows = b.trim().split('\n').slice(1);
      expect(rows.length).toBeGreaterThan(2);
      expect(rows.at(-1)).toMatch(/^total /);
    }
  });
});

describe.concurrent('a hub model that is not downloaded', () => {
  it('the hint is one runnable command, --model inside the backticks (was: after them)', async () => {
    const r = await cli(['nli', 'a', 'b', '--model', 'someone/other-model', '--device', 'cpu'], { HF_HUB_CACHE: tmp(), TODEVAL_MODEL: '' });
    expectOneLineError(r, 'someone/other-model', 'run `todeval models pull --model someone/other-model --dtype fp32`');
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json')).concurrent('MultiWOZ ConvLab acts', () => {
  it('a system act MultiWOZ does not have names file and turn (was: counted under "no rule", exit 0)', async () => {
    const all = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<string, { log: { dialog_act: object }[] }>;
    const [id, dialogue] = Object.entries(all)[0];
    dialogue.log[1].dialog_act = { 'Hotel-Infrom': [['Name', 'x']] };
    const file = path.join(tmp(), 'test.json');
    writeFileSync(file, JSON.stringify({ [id]: dialogue }));
    expectOneLineError(await cli(['refs', '--dataset', 'multiwoz', '--dialogues', file, '--summary']), file, `${id}/1`, 'unknown MultiWOZ system act "Infrom"');
  });
});

describe.concurrent('a base URL that is not http(s) is reported as that setting', () => {
  it('data pull --mirror that is not a URL', async () => {
    const r = await cli(['data', 'pull', '--only', 'gcdf1', '--data-dir', tmp(), '--mirror', 'notaurl']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--mirror');
    expect(r.stderr).toContain('notaurl');
  });

  it('models pull --hub-url that is not a URL', async () => {
    const r = await cli(['models', 'pull', '--cache-dir', tmp(), '--hub-url', 'notaurl']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--hub-url');
    expect(r.stderr).not.toContain('/api/models');
  });
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_001.json')).concurrent(
  'with the tiny random model: bad --model paths, foreign --out, rerank acts, score resuming after a kill',
  () => {
    let model = '';
    // One SGD file, not the whole test split (25 files, 62 MB parsed by each command): what these cases
    // check (refusals, resuming, the order of stderr lines) does not depend on how many turns are loaded.
    const ONE_FILE = ['--dialogues', path.join(DATA_DIR, 'sgd', 'test', 'dialogues_001.json')];
    beforeAll(async () => {
      model = await getTinyModelDir();
    }, 120_000);

    it('a model path that is a file, a missing one, and a truncated ONNX file', async () => {
      const onnx = path.join(model, 'onnx', 'model.onnx');
      expectOneLineError(await cli(['nli', 'a', 'b', '--model', onnx, '--device', 'cpu']), onnx, 'is a file, not a model directory');
      expectOneLineError(await cli(['nli', 'a', 'b', '--model', '/nonexistent', '--device', 'cpu']), '/nonexistent', 'does not exist');
      const corrupt = tmp();
      cpSync(model, corrupt, { recursive: true });
      const cut = path.join(corrupt, 'onnx', 'model.onnx');
      truncateSync(cut, 4096);
      expectOneLineError(await cli(['nli', 'a', 'b', '--model', corrupt, '--device', 'cpu']), cut, 'corrupt');
    }, 180_000);

    it('--out naming some other JSON file is refused and left untouched (was: "found undefined")', async () => {
      const other = path.join(tmp(), 'dialogues.json');
      const pretty = JSON.stringify([{ dialogue_id: 'x' }], null, 2);
      writeFileSync(other, pretty);
      const r = await cli(['score', '--dataset', 'sgd', '--data-dir', DATA_DIR, ...ONE_FILE, '--limit', '2', '--out', other, '--model', model, '--device', 'cpu']);
      expectOneLineError(r, other, 'not a todeval SGSAcc file');
      expect(readFileSync(other, 'utf8')).toBe(pretty);
    }, 180_000);

    it('rerank: an inline act no rule covers names the item (was: ranked as if unrealised by all)', async () => {
      const items = path.join(tmp(), 'items.jsonl');
      const item = (id: string, act: string) =>
        JSON.stringify({ id, service: 'Restaurants_2', actions: [{ act, slot: 'location', values: ['San Jose'] }], candidates: [{ system: 's1', text: 'It is in San Jose.' }] });
      writeFileSync(items, `${item('ok', 'INFORM')}\n${item('typo', 'INFROM')}\n`);
      const args = ['rerank', '-i', items, '--data-dir', DATA_DIR, ...ONE_FILE, '--model', model, '--device', 'cpu'];
      expectOneLineError(await cli(args), items, 'line 2 (item typo)', 'INFROM');
      const skipped = await cli([...args, '--skip-invalid']);
      expect(skipped.code).toBe(0);
      expect(skipped.stdout).toMatch(/rerank: 1 items/);
      // a misspelt --systems name (was: accepted, tie-break silently left to item order)
      writeFileSync(items, `${item('ok', 'INFORM')}\n`);
      expectOneLineError(await cli([...args, '--systems', 's2,s1']), '--systems', '"s2"');
    }, 180_000);

    it('missing predictions: score and ser refuse with one line; --allow-missing goes on and signs the subset', async () => {
      const dir = tmp();
      const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
      const own = ['--dataset', 'sgd', '--dialogues', path.join(mini, 'dialogues.json'), '--schema', path.join(mini, 'schema.json')];
      const refs = await cli(['refs', ...own.slice(2)]);
      const ids = [...new Set(refs.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id))];
      expect(ids.length).toBeGreaterThan(2);
      const preds = path.join(dir, 'preds.jsonl');
      // the first turn is missing, and one id is not in the data
      writeFileSync(preds, [...ids.slice(1), 'nope/1'].map((id) => JSON.stringify({ id, utterance: 'Sure.' })).join('\n') + '\n');
      for (const command of [['score', '--model', model, '--device', 'cpu'], ['ser']]) {
        const args = [command[0], ...own, '--predictions', preds, ...command.slice(1)];
        // The id that matches no turn is named first (exit 2), then the missing turn is counted.
        expectOneLineError(await cli(args), preds, '1 prediction ids match no turn', 'first: nope/1', '1 turns have no prediction', '--allow-missing');
        writeFileSync(preds, ids.slice(1).map((id) => JSON.stringify({ id, utterance: 'Sure.' })).join('\n') + '\n');
        expectOneLineError(await cli(args), preds, `1 turns have no prediction (first: ${ids[0]})`, '--allow-missing');
        writeFileSync(preds, [...ids.slice(1), 'nope/1'].map((id) => JSON.stringify({ id, utterance: 'Sure.' })).join('\n') + '\n');
        const ok = await cli([...args, '--allow-missing']);
        expect(ok.code).toBe(0);
        expect(ok.stdout).toContain('|missingPredictions:1|');
        expect(ok.stderr).toContain('1 prediction ids match no turn');
      }
    }, 180_000);

    it.skipIf(!existsSync('/usr/bin/script'))('on a terminal, the resume notice comes before the progress bar, not into its line', async () => {
      const out = path.join(tmp(), 'turns.jsonl');
      const base = ['score', '--dataset', 'sgd', '--data-dir', DATA_DIR, ...ONE_FILE, '--chunk', '4', '--out', out, '--model', model, '--device', 'cpu'];
      expect((await cli([...base, '--limit', '4'])).code).toBe(0);
      // util-linux `script` gives the command a pseudo-terminal, so stderr.isTTY is true
      const log = path.join(tmp(), 'tty.log');
      const quoted = [process.execPath, ...CLI_ARGV, ...base, '--limit', '8'].map((a) => `'${a}'`).join(' ');
      await promisify(execFile)('/usr/bin/script', ['-qec', `${quoted} > /dev/null`, log], { cwd: REPO_ROOT });
      const tty = readFileSync(log, 'utf8');
      const notice = tty.indexOf('resuming');
      const barStart = tty.indexOf('\x1b[?7l');
      expect(notice).toBeGreaterThan(-1);
      expect(barStart).toBeGreaterThan(notice);
      expect(tty.indexOf('\x1b[?7h')).toBeGreaterThan(barStart);
    }, 180_000);

    it('rerank --out resumes after a kill and refuses a file that is not its own (was: rewritten from scratch, even over the input)', async () => {
      const dir = tmp();
      const items = path.join(dir, 'items.jsonl');
      const lines = Array.from({ length: 70 }, (_, i) =>
        JSON.stringify({ id: `it${i}`, service: 'Restaurants_2', actions: [{ act: 'INFORM', slot: 'location', values: [`Town ${i % 7}`] }], candidates: [{ system: 'a', text: `It is in Town ${i % 5}.` }, { system: 'b', text: 'Hello.' }] }),
      );
      writeFileSync(items, lines.join('\n') + '\n');
      const out = path.join(dir, 'out.jsonl');
      const args = ['rerank', '-i', items, '--data-dir', DATA_DIR, ...ONE_FILE, '--model', model, '--device', 'cpu', '--out', out];
      const full = await cli(args);
      expect(full.code).toBe(0);
      const written = readFileSync(out, 'utf8');
      const rows = written.trim().split('\n');
      expect(rows).toHaveLength(71);
      // killed after the first chunk of 64, mid-way through writing the next record
      writeFileSync(out, `${rows.slice(0, 65).join('\n')}\n${rows[65].slice(0, 30)}`);
      const resumed = await cli(args);
      expect(resumed.code).toBe(0);
      expect(resumed.stderr).toContain(`resuming ${out}: 64 of 70 items already reranked`);
      expect(resumed.stdout).toBe(full.stdout);
      expect(readFileSync(out, 'utf8')).toBe(written);
      // --out naming the input itself (saved without a final newline): refused, input byte-for-byte intact
      writeFileSync(items, lines.join('\n'));
      expectOneLineError(await cli([...args.slice(0, -1), items]), items, '--turns would overwrite the --input file');
      // ...and a foreign JSONL under another name: the store refuses it, also untouched
      const foreign = path.join(dir, 'foreign.jsonl');
      writeFileSync(foreign, lines.join('\n'));
      expectOneLineError(await cli([...args.slice(0, -1), foreign]), foreign, 'not a todeval SGSAcc file');
      expect(readFileSync(foreign, 'utf8')).toBe(lines.join('\n'));
      expect(readFileSync(items, 'utf8')).toBe(lines.join('\n'));
    }, 240_000);

    it('a torn --out is resumed, and resumed again', async () => {
      const out = path.join(tmp(), 'turns.jsonl');
      const args = ['score', '--dataset', 'sgd', '--data-dir', DATA_DIR, ...ONE_FILE, '--limit', '12', '--chunk', '4', '--out', out, '--model', model, '--device', 'cpu'];
      const full = await cli(args);
      expect(full.code).toBe(0);
      const lines = readFileSync(out, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(13);
      // Killed mid-write: 7 whole records, then half of the 8th.
      writeFileSync(out, `${lines.slice(0, 8).join('\n')}\n${lines[8].slice(0, 40)}`);
      const resumed = await cli(args);
      expect(resumed.code).toBe(0);
      expect(resumed.stderr).toContain(`resuming ${out}: 7 of 12 turns already scored`);
      // Without --references the references are kept beside --out, so the resumed run has the ground
      // truth of every turn and prints the same table (was: the ground truth of 5 of 12 turns, issue 21).
      expect(resumed.stdout).toBe(full.stdout);
      expect(resumed.stderr).not.toContain('ground-truth section covers');
      const again = await cli(args);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain('12 of 12 turns already scored');
      expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(13);
    }, 240_000);
  },
);

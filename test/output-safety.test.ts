import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { refuseOutputOverInput } from '../src/cli/output-guard.js';
import { PairCache } from '../src/nli/pair-cache.js';
import { runRefsPipeline } from '../src/pipeline/refs.js';
import { writeFileAtomic, type AtomicWriteIo } from '../src/util/atomic-write.js';
import { InputError } from '../src/util/errors.js';
import { CLI_ARGV, runCli } from './helpers/cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { writeOneMatMulFp32 } from './helpers/one-matmul.js';
import { getTinyModelDir } from './helpers/tiny-model.js';
import { tempDir } from './helpers/temp.js';

const tmp = (): string => tempDir('outsafe');

function thrown(f: () => unknown): InputError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError');
}

describe('atomic report writes', () => {
  it('a write failure (simulated ENOSPC) names the file, leaves the old report intact and no temporary file', () => {
    const dir = tmp();
    const file = path.join(dir, 'report.json');
    writeFileSync(file, '{"old": true}\n');
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    let writes = 0;
    // FAKE file system calls: the first write succeeds partly, the second fails as a full disk does.
    const io: AtomicWriteIo = {
      ...fs,
      writeSync: (fd, buf, off, len) => {
        if (writes++ > 0) throw enospc;
        return fs.writeSync(fd, buf, off, Math.min(len, 5));
      },
    };
    const e = thrown(() => writeFileAtomic(file, JSON.stringify({ big: 'x'.repeat(1000) }), io));
    expect(e.oneLine()).toBe(`${file}: cannot write: no space left on device (nothing was written; an earlier file of that name is unchanged)`);
    expect(readFileSync(file, 'utf8')).toBe('{"old": true}\n');
    expect(readdirSync(dir)).toEqual(['report.json']);
  });

  it('a failing fsync or rename also leaves the target as it was', () => {
    const dir = tmp();
    const file = path.join(dir, 'r.json');
    for (const step of ['fsyncSync', 'renameSync'] as const) {
      const io: AtomicWriteIo = { ...fs, [step]: () => { throw Object.assign(new Error('EIO'), { code: 'EIO' }); } };
      thrown(() => writeFileAtomic(file, 'new', io));
      expect(existsSync(file)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    }
    writeFileAtomic(file, 'whole');
    expect(readFileSync(file, 'utf8')).toBe('whole');
    expect(readdirSync(dir)).toEqual(['r.json']);
  });
});

describe('atomic writes of a process that exits before committing', () => {
  it('process.exit mid-write (the CLI on Ctrl-C during refs -o) leaves no temporary file (was: a hidden .NAME.PID.tmp as large as what was written)', async () => {
    const dir = tmp();
    const script = path.join(dir, 'exit-mid-write.mjs');
    // Plain JavaScript against the build (dist/, made by the tests' globalSetup): nothing compiled at its start.
    writeFileSync(
      script,
      `import { AtomicFile } from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'src', 'util', 'atomic-write.js'))};\n` +
        `const out = new AtomicFile(${JSON.stringify(path.join(dir, 'refs.jsonl'))});\n` +
        `out.write('{"id":"d/1"}\\n');\n` +
        'process.exit(130);\n',
    );
    const code = await new Promise<number | null>((resolve) => spawn(process.execPath, [script], { cwd: REPO_ROOT, stdio: 'ignore' }).once('exit', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(readdirSync(dir)).toEqual(['exit-mid-write.mjs']);
  }, 30_000);

  it('process.exit while the q8 model is being written leaves no partial model file (was: MODEL.partial-PID, as large as the model, beside it)', async () => {
    const dir = tmp();
    const fp32 = path.join(dir, 'fp32.onnx');
    writeOneMatMulFp32(fp32);
    const script = path.join(dir, 'exit-mid-quantize.mjs');
    const dist = (file: string): string => JSON.stringify(path.join(REPO_ROOT, 'dist', 'src', 'nli', 'onnx-builder', file));
    // The fp32 file read through a source that ends the process (as the CLI's signal handler does,
    // through process.exit) at the first read after a new file appeared in the folder: the q8
    // model's temporary file, open and partly written; its lazily copied parts are read while it is written.
    writeFileSync(
      script,
      `import { readdirSync } from 'node:fs';\n` +
        `import { quantizeModel } from ${dist('quantize.js')};\n` +
        `import { FileSource } from ${dist('onnx-reader.js')};\n` +
        `const dir = ${JSON.stringify(dir)};\n` +
        'const before = new Set(readdirSync(dir));\n' +
        `const file = new FileSource(${JSON.stringify(fp32)});\n` +
        'const src = {\n' +
        '  length: file.length,\n' +
        '  read(offset, length) {\n' +
        '    if (readdirSync(dir).some((f) => !before.has(f))) process.exit(130);\n' +
        '    return file.read(offset, length);\n' +
        '  },\n' +
        '};\n' +
        `quantizeModel(src, ${JSON.stringify(path.join(dir, 'q8.onnx'))}, 'row');\n`,
    );
    const code = await new Promise<number | null>((resolve) => spawn(process.execPath, [script], { cwd: REPO_ROOT, stdio: 'ignore' }).once('exit', (c) => resolve(c)));
    // 130, not 0: the process did end mid-write (a write that completed would exit 0 and prove nothing).
    expect(code).toBe(130);
    expect(readdirSync(dir).sort()).toEqual(['exit-mid-quantize.mjs', 'fp32.onnx']);
  }, 30_000);
});

describe('refs -o and its signature are replaced as a pair', () => {
  it('a signature that cannot be written leaves the old references as they were (was: the new references renamed into place first, then the signature write failed beside them)', async () => {
    const dir = tmp();
    const output = path.join(dir, 'refs.jsonl');
    writeFileSync(output, 'old references\n');
    // A folder at the signature's path: a library call (no command's check before the work) meets it
    // only once the references are written, as a full disk would.
    mkdirSync(`${output}.signature.json`);
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const run = runRefsPipeline({ dataset: 'sgd', input: path.join(mini, 'dialogues.json'), schemaFile: path.join(mini, 'schema.json'), output });
    await expect(run).rejects.toThrow(InputError);
    expect(readFileSync(output, 'utf8')).toBe('old references\n');
    // Neither temporary file stays behind.
    expect(readdirSync(dir).sort()).toEqual(['refs.jsonl', 'refs.jsonl.signature.json']);
  });
});

describe('output paths are checked before any work, naming the flag', () => {
  const dir = tmp();
  const input = path.join(dir, 'in.json');
  writeFileSync(input, '{}');
  const folder = path.join(dir, 'dialogues');
  mkdirSync(folder);

  it('the folder must exist (never created, for every flag alike)', () => {
    const out = path.join(dir, 'no', 'such', 'r.json');
    expect(thrown(() => refuseOutputOverInput({ '--turns': out }, {})).oneLine()).toBe(
      `${out}: --turns: the folder ${path.dirname(out)} does not exist (no such file or directory); create it first`,
    );
  });

  it('a folder is not a file', () => {
    expect(thrown(() => refuseOutputOverInput({ '-o/--output': folder }, {})).message).toBe('-o/--output names a folder; give a file name');
  });

  it('not an input, not inside an input folder, not another output', () => {
    expect(thrown(() => refuseOutputOverInput({ '--cache': input }, { '-i/--input': input })).message).toMatch(/^--cache would overwrite the -i\/--input file/);
    expect(thrown(() => refuseOutputOverInput({ '-o/--output': path.join(folder, 'scores.json') }, { '-d/--dialogues': folder })).message).toMatch(
      /^-o\/--output is inside the -d\/--dialogues folder/,
    );
    const out = path.join(dir, 'a.json');
    expect(thrown(() => refuseOutputOverInput({ '--references': out, '--cache': path.join(dir, '.', 'a.json') }, {})).message).toMatch(
      /^--cache and --references name the same file/,
    );
    expect(() => refuseOutputOverInput({ '-o/--output': out, '--turns': undefined }, { '-i/--input': '-' })).not.toThrow();
  });

  it.skipIf(!hasData('gcdf1'))('gcdf1 -o into the dialogues folder is refused and the folder left as it was (was: an input overwritten, exit 0)', async () => {
    const dialogues = path.join(tmp(), 'convs');
    mkdirSync(dialogues);
    writeFileSync(path.join(dialogues, 'dialogues_001.json'), '[]');
    const r = await runCli(['gcdf1', '-d', dialogues, '-o', path.join(dialogues, 'dialogues_001.json'), '--no-canonical-map']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('-o/--output is inside the -d/--dialogues folder');
    expect(readFileSync(path.join(dialogues, 'dialogues_001.json'), 'utf8')).toBe('[]');
  });
});

describe('--cache refuses a file that is not an NLI cache', () => {
  it('a references or per-turn file is refused and left byte-for-byte as it was', () => {
    const file = path.join(tmp(), 'refs.jsonl');
    const text = `${JSON.stringify({ kind: 'todeval-sgsacc-references', digest: 'x', signature: {} })}\n${JSON.stringify({ id: 'd/1', actions: [] })}\n`;
    writeFileSync(file, text);
    const e = thrown(() => new PairCache('model@rev/fp32/max512', file));
    expect(e.oneLine()).toBe(`${file}: line 1: not an NLI cache (it is a todeval-sgsacc-references file); --cache takes a file of its own, left untouched here`);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('a cache of another model is still a cache (read, its lines kept)', () => {
    const file = path.join(tmp(), 'cache.jsonl');
    writeFileSync(file, `${JSON.stringify({ m: 'other', p: 'a', h: 'b', e: 0.1, n: 0.2, c: 0.7 })}\n`);
    expect(new PairCache('mine', file).size).toBe(0);
  });
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_001.json'))('Ctrl-C', () => {
  it('prints one line: how many turns are saved where, and the command that resumes; that command resumes', async () => {
    const model = await getTinyModelDir();
    const turns = path.join(tmp(), 'turns.jsonl');
    // --dialogues: the first file's 768 system turns hold the 400; without it both runs read the whole SGD test set (~1 CPU-s each).
    const args = ['score', '--data-dir', DATA_DIR, '--limit', '400', '--dialogues', path.join(DATA_DIR, 'sgd', 'test', 'dialogues_001.json'), '--chunk', '2', '--turns', turns, '--model', model, '--device', 'cpu'];
    const child = spawn(process.execPath, [...CLI_ARGV, ...args], { cwd: REPO_ROOT });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const poll = setInterval(() => {
        if (existsSync(turns) && readFileSync(turns, 'utf8').split('\n').length > 4) {
          clearInterval(poll);
          child.kill('SIGINT');
        }
      }, 50);
      child.on('exit', (c) => {
        clearInterval(poll);
        resolve(c);
      });
    });
    expect(code).toBe(130);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const m = /^todeval: interrupted: (\d+) of 400 turns saved in (.+); resume with: (todeval score .*)$/.exec(lines[0]);
    expect(m).not.toBeNull();
    const saved = Number(m![1]);
    expect(m![2]).toBe(turns);
    expect(saved).toBe(readFileSync(turns, 'utf8').trim().split('\n').length - 1);
    expect(m![3]).toBe(`todeval ${args.join(' ')}`);
    // The printed command resumes where the run stopped (run here on a smaller slice of the same turns).
    const resumed = await runCli([...args.slice(0, 4), String(saved + 2), ...args.slice(5)]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`resuming ${turns}: ${saved} of ${saved + 2} turns already scored`);
  }, 120_000);
});

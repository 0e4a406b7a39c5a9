import { lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { refuseOutputOverInput } from '../src/cli/output-guard.js';
import { buildQ8 } from '../src/nli/q8-build.js';
import { writeFileAtomic } from '../src/util/atomic-write.js';
import { runCli, runProcess } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { getTinyModelDir } from './helpers/tiny-model.js';
import { refusal } from './helpers/refusal.js';

// Issue 42: `quantize -o /dev/full` and `score -o <char device>` renamed a regular file over the
// device; `score -o link.json` replaced the link and left its target stale. Every command that
// writes goes through one check (checkOutputPath, from refuseOutputOverInput) and one atomic write.


/** A character device made in a temp folder (1,7 is /dev/full's numbers); null where mknod is not allowed. */
async function charDevice(dir: string): Promise<string | null> {
  const dev = path.join(dir, 'full');
  return (await runProcess('mknod', [dev, 'c', '1', '7'])).code === 0 ? dev : null;
}

/** mkfifo FILE, or the test fails naming why. */
async function mkfifo(file: string): Promise<void> {
  const r = await runProcess('mkfifo', [file]);
  if (r.code !== 0) throw new Error(`mkfifo ${file}: ${r.stderr}`);
}

describe('output paths: a device, FIFO, socket or folder is refused in one line before any work', () => {
  it('a character device made with mknod', async (ctx) => {
    const dev = await charDevice(tempDir('outpath'));
    if (!dev) return ctx.skip(); // mknod needs CAP_MKNOD: not everywhere
    expect(refusal(() => refuseOutputOverInput({ '-o/--output': dev }, {}))).toBe(`${dev}: -o/--output: refused: a character device, not a regular file; give a file name`);
    expect(statSync(dev).isCharacterDevice()).toBe(true);
  });

  it('a FIFO, a socket and a folder', async () => {
    const dir = tempDir('outpath');
    const fifo = path.join(dir, 'pipe');
    await mkfifo(fifo);
    expect(refusal(() => refuseOutputOverInput({ '--turns': fifo }, {}))).toBe(`${fifo}: --turns: refused: a FIFO (named pipe), not a regular file; give a file name`);
    const sock = path.join(dir, 'sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      expect(refusal(() => refuseOutputOverInput({ '--references': sock }, {}))).toBe(`${sock}: --references: refused: a socket, not a regular file; give a file name`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(refusal(() => refuseOutputOverInput({ '-o/--output': dir }, {}))).toBe(`${dir}: -o/--output names a folder; give a file name`);
  });

  it('the atomic write itself refuses a device or FIFO (nothing renames over one)', async () => {
    const dir = tempDir('outpath');
    const fifo = path.join(dir, 'pipe');
    await mkfifo(fifo);
    expect(refusal(() => writeFileAtomic(fifo, 'x'))).toBe(`${fifo}: cannot write: a FIFO (named pipe), not a regular file; give a file name`);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });
});

describe('output paths: a symbolic link is followed, its target written atomically and the link kept', () => {
  it('writeFileAtomic through a link (was: the link replaced, its target stale)', () => {
    const dir = tempDir('outpath');
    const real = path.join(dir, 'real.json');
    const link = path.join(dir, 'link.json');
    writeFileSync(real, 'old');
    symlinkSync('real.json', link);
    refuseOutputOverInput({ '-o/--output': link }, {});
    writeFileAtomic(link, 'new');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('real.json');
    expect(readFileSync(real, 'utf8')).toBe('new');
  });

  it('a dangling link is refused', () => {
    const dir = tempDir('outpath');
    const link = path.join(dir, 'link.json');
    symlinkSync('nowhere.json', link);
    expect(refusal(() => refuseOutputOverInput({ '-o/--output': link }, {}))).toBe(
      `${link}: -o/--output: refused: a symbolic link to a file that does not exist; remove the link or give another name`,
    );
  });
});

describe('models quantize -o is checked before the build', () => {
  it('a device is refused and stays a device (was: "built /dev/full", exit 0, the device replaced)', async (ctx) => {
    const dev = await charDevice(tempDir('outpath'));
    if (!dev) return ctx.skip();
    const r = await runCli(['models', 'quantize', '--model', await getTinyModelDir(), '-o', dev]);
    expect(r.stderr).toBe(`todeval: ${dev}: -o/--output: refused: a character device, not a regular file; give a file name\n`);
    expect(r.code).toBe(2);
    expect(statSync(dev).isCharacterDevice()).toBe(true);
  }, 60_000);

  it('an existing folder is refused before the build (was: after the whole build, naming a temporary path)', async () => {
    const dir = tempDir('outpath');
    const out = path.join(dir, 'q8');
    mkdirSync(out);
    const r = await runCli(['models', 'quantize', '--model', await getTinyModelDir(), '-o', out]);
    expect(r.stderr).toBe(`todeval: ${out}: -o/--output names a folder; give a file name\n`);
    expect(r.code).toBe(2);
  }, 60_000);

  it('through a symbolic link: the target is the model, the link stays', async () => {
    const dir = tempDir('outpath');
    const link = path.join(dir, 'q8.onnx');
    writeFileSync(path.join(dir, 'real.onnx'), '');
    symlinkSync('real.onnx', link);
    const r = await runCli(['models', 'quantize', '--model', await getTinyModelDir(), '-o', link]);
    expect(r.code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(statSync(path.join(dir, 'real.onnx')).size).toBeGreaterThan(1000);
  }, 60_000);

  it('the fp32 file by another path (its folder through a symbolic link) is refused before the build (was: the export replaced by the q8 file)', () => {
    const dir = tempDir('outpath');
    const model = path.join(dir, 'export');
    mkdirSync(path.join(model, 'onnx'), { recursive: true });
    // Not a model: the refusal comes before a byte of it is read.
    writeFileSync(path.join(model, 'onnx', 'model.onnx'), 'fp32 export');
    for (const f of ['tokenizer.json', 'config.json']) writeFileSync(path.join(model, f), '{}');
    symlinkSync(model, path.join(dir, 'same'));
    const out = path.join(dir, 'same', 'onnx', 'model.onnx');
    expect(refusal(() => buildQ8(model, out))).toBe(`--output ${out} is the fp32 file itself; give another path`);
    expect(readFileSync(path.join(model, 'onnx', 'model.onnx'), 'utf8')).toBe('fp32 export');
  });
});

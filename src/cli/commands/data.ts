import path from 'node:path';
import type { Command } from 'commander';
import { pull, type PullEvent } from '../../data/pull.js';
import { progressBar } from '../../util/progress/bar.js';
import { mib } from '../../util/units.js';
import { refuseUnwritableFolder } from '../output-guard.js';

/** `todeval data pull`: download the public datasets into ./data (layout of ../shared/DATA.md). */
export function register(program: Command): void {
  const data = program.command('data').description('download the public datasets (SGD, MultiWOZ, GCDF1)');

  data
    .command('pull')
    .description('download the datasets pinned in data/datasets.json, verifying size and sha256; resumes and skips finished files')
    .option('--data-dir <dir>', 'where to write (default: $TODEVAL_DATA, else ./data)')
    .option('--only <names>', 'comma-separated datasets: sgd,multiwoz,gcdf1 (default all)')
    .option('--mirror <url>', 'fetch the same paths from this base URL instead (default $TODEVAL_DATA_MIRROR)')
    .option('--manifest <file>', 'use another manifest instead of the bundled data/datasets.json')
    .action(async (flags: { dataDir?: string; only?: string; mirror?: string; manifest?: string }) => {
      // Where the other commands look first ($TODEVAL_DATA before ./data), so what is pulled is found.
      const dataDir = path.resolve(flags.dataDir ?? (process.env.TODEVAL_DATA || 'data'));
      refuseUnwritableFolder('--data-dir', dataDir);
      const only = flags.only?.split(',').map((s) => s.trim()).filter(Boolean);
      const mirror = flags.mirror ?? (process.env.TODEVAL_DATA_MIRROR || undefined);
      const bar = progressBar('data pull [{bar}] {percentage}% {done}/{total_mib} {file}', { hideCursor: true });
      let done = 0;
      let total = 0;
      const onEvent = (e: PullEvent): void => {
        if (e.kind === 'start') {
          total = e.totalBytes;
          bar?.start(total, 0, { done: mib(0), total_mib: mib(total), file: '' });
        } else if (e.kind === 'progress') {
          done += e.bytes;
          bar?.update(done, { done: mib(done), file: e.file.path });
        } else if (e.kind === 'done' && !bar) {
          // Without a TTY, one line per file keeps logs readable.
          process.stderr.write(`fetched ${e.file.path} (${mib(e.file.size)}${e.resumed ? ', resumed' : ''})\n`);
        }
      };
      const result = await pull({ dataDir, only, mirror, manifestFile: flags.manifest, onEvent }).finally(() => bar?.stop());
      process.stdout.write(
        `${result.fetched.length} file(s) downloaded (${mib(result.bytes)}${result.resumed.length ? `, ${result.resumed.length} resumed` : ''}), ` +
          `${result.skipped.length} already present and verified, in ${result.dataDir}\n`,
      );
    });
}

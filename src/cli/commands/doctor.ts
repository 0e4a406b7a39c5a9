import { Option, type Command } from 'commander';
import { formatDoctor, runDoctor, type DoctorDevice } from '../../nli/cuda/doctor.js';
import { setupCudaProvider } from '../../nli/cuda/provider.js';

/** `todeval doctor`: what this install can run on, what is missing, and the command that fixes each piece. */
export function register(program: Command): void {
  program
    .command('doctor')
    .description('check Node, onnxruntime-node, the CPU/CUDA execution providers (tried for real), CUDA libraries, models and data')
    .addOption(new Option('--device <device>', 'the device you mean to use: exit 2 when it cannot run').choices(['auto', 'cpu', 'cuda']).default('auto'))
    .option('--json', 'print the report as JSON')
    .option('--fix-cuda', 'first fetch the CUDA provider from the npm registry and place it beside libonnxruntime.so (same as npm run cuda:setup)')
    .option('--provider-tgz <file>', 'with --fix-cuda: use this already downloaded provider package instead of fetching it')
    .addOption(new Option('--provider-dir <dir>', 'check this folder for the CUDA provider libraries').hideHelp())
    .action(async (flags: { device: DoctorDevice; json?: boolean; fixCuda?: boolean; providerTgz?: string; providerDir?: string }) => {
      if (flags.fixCuda) setupCudaProvider({ tarball: flags.providerTgz });
      const report = await runDoctor({ device: flags.device, providerDir: flags.providerDir });
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
      if (!report.canRun) process.exitCode = 2;
    });
}

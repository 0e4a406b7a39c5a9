import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Argument, Option, type Command } from 'commander';
import { DTYPE_CHOICES } from '../nli-options.js';
import { DEFAULT_MODEL_ID, hubCacheDir, listCachedModels, parseDtype } from '../../nli/model-store.js';
import { pullModel } from '../../nli/pull.js';
import { buildQ8 } from '../../nli/q8-build.js';
import { downloadProgress } from '../../util/progress/bar.js';
import { mib } from '../../util/units.js';
import { refuseOutputOverInput, refuseUnwritableFolder } from '../output-guard.js';
import { buildLexicalStandin, buildNullStandin } from '../../nli/onnx-builder/index.js';
import { InputError } from '../../util/errors.js';

const STANDINS = ['lexical', 'null'] as const;

/**
 * `todeval models pull|list|quantize|build-standin`: fetch the ONNX NLI model into the Hugging Face cache, build its q8 file,
 * show what is there, or build a stand-in model (not a language model) from the tokenizer the
 * package ships, so a project that depends on todeval can run it end to end without the download.
 */
export function register(program: Command): void {
  const models = program.command('models').description('download and list NLI models (Hugging Face cache layout)');
  registerPull(models);
  registerQuantize(models);
  registerBuildStandin(models);
  registerList(models);
}

/** `models pull`: the model files for one dtype, checked against the hub, with their progress on stderr. */
function registerPull(models: Command): void {
  models
    .command('pull')
    .description('download the NLI model files for one dtype, verifying sizes and sha256 against the hub')
    .option('--model <id>', 'hub model id', DEFAULT_MODEL_ID)
    .addOption(new Option('--dtype <dtype>', 'weights to fetch (q8 = int8: fetches fp32 and builds the per-row int8 file from it; q8-tensor: the hub\'s per-tensor int8 file)').choices(DTYPE_CHOICES).default('fp32'))
    .option('--revision <rev>', 'branch, tag or commit (default: the manifest pin)')
    .option('--hub-url <url>', 'hub endpoint (default $HF_ENDPOINT, else https://huggingface.co)')
    .option('--cache-dir <dir>', 'hub cache (default $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)')
    .action(async (flags: { model: string; dtype: string; revision?: string; hubUrl?: string; cacheDir?: string }) => {
      const dtype = parseDtype(flags.dtype) ?? 'fp32';
      refuseUnwritableFolder('--cache-dir', flags.cacheDir ?? hubCacheDir());
      const progress = downloadProgress('pull {file} [{bar}] {percentage}% {value}/{total} MiB');
      const result = await pullModel({
        id: flags.model,
        dtype,
        revision: flags.revision,
        hubUrl: flags.hubUrl,
        cacheDir: flags.cacheDir,
        accessToken: process.env.HF_TOKEN,
        onProgress: progress.update,
      }).finally(progress.stop);
      for (const f of result.files) {
        const how = f.built ? `built      ${f.path} ${mib(f.size)} sha256 ${f.digest.slice(0, 12)}` : `${f.downloaded ? 'downloaded' : 'present   '} ${f.path} ${mib(f.size)} verified ${f.digest.slice(0, 12)}`;
        process.stdout.write(`${how}\n`);
      }
      process.stdout.write(`${result.id}@${result.commit} (${dtype}) in ${result.dir}\n`);
    });
}

function registerQuantize(models: Command): void {
  models
    .command('quantize')
    .description('build the q8 file (int8, activations per row, 7-bit weights: the same score in any batch, integer sums exact on every x86 CPU) from a model\'s fp32 ONNX export')
    .option('--model <id|dir>', 'hub id (in the hub cache) or directory holding the fp32 export (default $TODEVAL_MODEL, else Xenova/roberta-large-mnli)')
    .option('-o, --output <file>', 'where to write it (default: onnx/model_q8_row.onnx beside the fp32 file, where --dtype q8 finds it)')
    .action((flags: { model?: string; output?: string }) => {
      // Before the build: a folder, device or FIFO at -o is refused here, not after minutes of work.
      if (flags.output) refuseOutputOverInput({ '-o/--output': flags.output }, {});
      const r = buildQ8(flags.model, flags.output);
      process.stdout.write(`built ${r.out} ${mib(r.bytes)} sha256 ${r.sha256.slice(0, 12)} from ${r.from}: ${r.matmuls} MatMuls, ${r.gathers} embedding tables in int8 (q8-row2)\n`);
    });
}

function registerBuildStandin(models: Command): void {
  models
    .command('build-standin')
    .description('build a stand-in NLI model into a folder for --model DIR: lexical (decides by token overlap) or null (always the same label); NOT language models, for demos and tests')
    .addArgument(new Argument('<kind>', 'which stand-in').choices(STANDINS))
    .requiredOption('--out <dir>', 'the folder to write the model into (then --model DIR)')
    .action((kind: (typeof STANDINS)[number], flags: { out: string }) => {
      refuseUnwritableFolder('--out', path.dirname(path.resolve(flags.out)));
      if (existsSync(flags.out) && readdirSync(flags.out).length > 0) throw new InputError(`--out ${flags.out}: the folder is not empty; give a new or empty one`);
      const out = path.resolve(flags.out);
      const built = kind === 'lexical' ? buildLexicalStandin({ outDir: out }) : buildNullStandin({ outDir: out });
      process.stdout.write(`wrote ${path.join(flags.out, built.onnxFile)} (${kind} stand-in, NOT a language model): --model ${flags.out}\n`);
    });
}

function registerList(models: Command): void {
  models
    .command('list')
    .description('show the NLI models present in the hub cache')
    .option('--cache-dir <dir>', 'hub cache (default $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)')
    .option('--json', 'print JSON')
    .action((flags: { cacheDir?: string; json?: boolean }) => {
      const dir = flags.cacheDir ?? hubCacheDir();
      const present = listCachedModels(dir);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ cacheDir: dir, models: present })}\n`);
        return;
      }
      if (present.length === 0) {
        process.stdout.write(`no NLI models in ${dir}; run \`todeval models pull\` or pass --model <dir>\n`);
        return;
      }
      for (const m of present) process.stdout.write(`${m.id}@${m.revision.slice(0, 12)} ${m.dtypes.join(',')} ${mib(m.bytes)} ${m.family} ${m.dir}\n`);
    });
}

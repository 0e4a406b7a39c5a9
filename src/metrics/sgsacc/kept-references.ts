import path from 'node:path';

/**
 * Where `score` keeps the references it computed when `--references` is not given: beside the
 * per-turn file (`run.turns.jsonl` -> `run.turns.references.jsonl`), else beside the report
 * (`run.json` -> `run.references.jsonl`); none when the run keeps neither. Kept so that resuming,
 * re-running and `--workers` give the ground-truth section of every turn, not only of the turns
 * this process computed. One rule for a single process and for each `--workers` shard.
 */
export function keptReferencesFile(files: { turns?: string; output?: string }): string | undefined {
  const beside = files.turns ?? files.output;
  if (!beside) return undefined;
  const ext = path.extname(beside);
  const stem = ext === '.json' || ext === '.jsonl' ? beside.slice(0, beside.length - ext.length) : beside;
  return `${stem}.references.jsonl`;
}

import { InputError } from './errors.js';
import { schemaError } from './json-schema.js';

/** The schema definition each run kind's report is checked against (schemas/run-report.schema.json). */
const DEFINITION_OF_METRIC: Record<string, string> = {
  sgsacc: 'score',
  'mwz-evaluate': 'evaluate',
  'sgsacc-rerank': 'rerank',
  gcdf1: 'gcdf1',
};

/**
 * A run report (or shard report) checked against the project's schema before report or merge uses
 * it: a report whose fields are not what todeval writes (`"sgsacc": "oops"`, a count that is text)
 * is refused in one line naming the file and the field, rather than rendered or summed. `metric`
 * is the signature's; a metric without a definition is left to the caller to refuse.
 */
export function checkRunReport(doc: unknown, metric: unknown, file: string): void {
  const definition = typeof metric === 'string' ? DEFINITION_OF_METRIC[metric] : undefined;
  if (!definition) return;
  const problem = schemaError(doc, 'run-report.schema.json', definition);
  if (problem) throw new InputError(`not a valid ${metric} run report: ${problem}`, { file });
}

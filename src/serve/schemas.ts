import { readPackageJson } from '../util/package-file.js';
import type { ServeLimits } from './limits.js';

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema> };

const ITEM_ID = 'todeval-serve-rerank-item';

/**
 * Request bodies as JSON Schemas for Fastify's validation. A rerank item is exactly a line of the
 * `todeval rerank` input (schemas/rerank-input.schema.json), with this server's limits added; score
 * items take their actions from the same schema.
 */
export function bodySchemas(limits: ServeLimits): { shared: JsonSchema[]; rerank: JsonSchema; score: JsonSchema; nli: JsonSchema } {
  const item = structuredClone(readPackageJson<JsonSchema>('schemas', 'rerank-input.schema.json'));
  delete item.$schema;
  item.$id = ITEM_ID;
  // Unknown keys are refused, as in score items and candidates: a misspelt "contxt" would otherwise
  // be dropped without a word and the item scored without its context.
  item.additionalProperties = false;
  item.properties!.candidates.maxItems = limits.maxCandidates;
  item.properties!.actions.maxItems = limits.maxActions;
  const actions = item.properties!.actions;

  const items = (of: JsonSchema) => ({ type: 'array', minItems: 1, maxItems: limits.maxItems, items: of });
  const rerank = {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: {
      items: items({ $ref: `${ITEM_ID}#` }),
      systems: { type: 'array', maxItems: limits.maxCandidates, items: { type: 'string', minLength: 1 }, description: 'tie-break order of systems (as rerank --systems)' },
    },
  };
  const score = {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: {
      items: items({
        type: 'object',
        required: ['id', 'utterance'],
        anyOf: [{ required: ['actions'] }, { required: ['dataset_id'] }],
        additionalProperties: false,
        properties: {
          id: { type: 'string', minLength: 1 },
          utterance: { type: 'string', description: 'the system utterance to score' },
          dataset_id: item.properties!.dataset_id,
          service: { type: 'string' },
          actions,
          context: { type: 'string', description: 'previous user turn' },
          ground_truth: { type: 'string', description: 'gold utterance of inline actions, to select and validate references' },
        },
      }),
    },
  };
  const nli = {
    type: 'object',
    required: ['pairs'],
    additionalProperties: false,
    properties: {
      pairs: {
        type: 'array',
        minItems: 1,
        maxItems: limits.maxPairs,
        items: {
          type: 'object',
          required: ['premise', 'hypothesis'],
          additionalProperties: false,
          properties: { premise: { type: 'string' }, hypothesis: { type: 'string' } },
        },
      },
    },
  };
  return { shared: [item], rerank, score, nli };
}

/**
 * Which kind of cross-encoder a model is, from its config.json `model_type` (DeBERTa-v3 checkpoints
 * say "deberta-v2", MiniLM ones "bert"). Signatures name it, doctor prints it, and it decides the
 * one thing the files leave implicit: how many positions the model reserves.
 */
export function modelFamily(config: Record<string, unknown>): string {
  return typeof config.model_type === 'string' && config.model_type !== '' ? config.model_type.toLowerCase() : 'unknown';
}

/**
 * Positions a family reserves below its first token: RoBERTa and its descendants number positions
 * from padding_idx + 1, so 514 position embeddings hold 512 tokens. BART's offset is inside the
 * model (its config already gives the usable length); BERT, ELECTRA and DeBERTa reserve none.
 */
const RESERVED_POSITIONS: Record<string, number> = { roberta: 2, 'xlm-roberta': 2, camembert: 2, longformer: 2 };

/** Tokens a model of `family` takes at most, from config.json's max_position_embeddings. */
export function positionsLimit(family: string, config: Record<string, unknown>): number | undefined {
  const positions = config.max_position_embeddings;
  if (typeof positions !== 'number') return undefined;
  return positions - (RESERVED_POSITIONS[family] ?? 0);
}

/** The family as signatures name it: absent for RoBERTa, the only family before, so its runs keep their signatures. */
export function signatureFamily(family: string): string | undefined {
  return family === 'roberta' ? undefined : family;
}

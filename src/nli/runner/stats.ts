export interface NliRunnerStats {
  /** Pairs callers asked for. */
  requested: number;
  /** Pairs actually run through the model. */
  issued: number;
  /** Pairs answered from the cache or shared with an identical pair already in flight. */
  cacheHits: number;
  batches: number;
  /** Real (unpadded) tokens run through the model. */
  tokens: number;
  /** Tokens including padding: tokens / paddedTokens is the padding efficiency. */
  paddedTokens: number;
  /** Batches halved after an out-of-memory error. */
  oomSplits: number;
  /** Pairs whose premise (or hypothesis) was cut to fit the model maximum. */
  truncated: number;
  /** Pairs dropped from the in-memory pair cache to keep it within its byte budget. */
  cacheEvictions: number;
  /** Texts tokenized on the calling thread (a server's event loop) rather than on tokenizer threads. */
  textsTokenizedHere: number;
}

export function emptyStats(): NliRunnerStats {
  return { requested: 0, issued: 0, cacheHits: 0, batches: 0, tokens: 0, paddedTokens: 0, oomSplits: 0, truncated: 0, cacheEvictions: 0, textsTokenizedHere: 0 };
}

import { InputError } from '../util/errors.js';

/**
 * How a model joins a (premise, hypothesis) pair: the special tokens before, between and after the
 * two sides, and the segment id (token_type_ids) of every token. It is read from the tokenizer's
 * post-processor, so each model gets the encoding its own tokenizer.json defines, with the segment
 * ids the Hugging Face tokenizers library (the Rust one, which transformers uses) gives it.
 * Texts are tokenized on their own and joined here, so a text's ids stay memoised once per text.
 */
export interface PairEncoding {
  /** Ids before the premise, between the premise and the hypothesis, after the hypothesis. */
  readonly prefix: Int32Array;
  readonly middle: Int32Array;
  readonly suffix: Int32Array;
  /** Segment ids of those special tokens, position for position. */
  readonly prefixTypes: Int32Array;
  readonly middleTypes: Int32Array;
  readonly suffixTypes: Int32Array;
  /** Segment id of every premise token, and of every hypothesis token. */
  readonly premiseType: number;
  readonly hypothesisType: number;
  /** Special tokens a pair adds: what truncation must leave room for. */
  readonly specials: number;
  /** No token of any pair has a non-zero segment id (RoBERTa, BART): none need be packed. */
  readonly segmentsAllZero: boolean;
  /** The post-processor the encoding came from (its `type`, or "none"). */
  readonly processor: string;
  /**
   * The pair as a template, each piece with its segment id: `[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1`.
   * Signatures carry it, so runs with different pair encodings never compare.
   */
  readonly template: string;
}

/** RoBERTa's pair encoding, the only one todeval had before: signatures leave it unnamed (see signatureEncoding). */
export const ROBERTA_PAIR_TEMPLATE = '<s>:0 $A:0 </s>:0 </s>:0 $B:0 </s>:0';

interface Special {
  token: string;
  id: number;
  type: number;
}

interface Layout {
  prefix: Special[];
  middle: Special[];
  suffix: Special[];
  premiseType: number;
  hypothesisType: number;
}

type PostProcessorJson = { type?: string; [key: string]: unknown } | null | undefined;

/**
 * The pair encoding of a tokenizer.json. `tokenId` looks a token up in the tokenizer (for template
 * special tokens the file gives no id for). Post-processors that add no special tokens (none,
 * ByteLevel) give `$A:0 $B:1`, as the library's default processing does; a post-processor this
 * does not know is refused in one line naming it, never guessed at.
 */
export function pairEncodingOf(tokenizerJson: object, tokenId: (token: string) => number | undefined, file?: string): PairEncoding {
  const post = (tokenizerJson as { post_processor?: PostProcessorJson }).post_processor;
  const { layout, processor } = layoutOf(post, tokenId, file);
  const ids = (s: Special[]) => Int32Array.from(s.map((x) => x.id));
  const types = (s: Special[]) => Int32Array.from(s.map((x) => x.type));
  const all = [...layout.prefix, ...layout.middle, ...layout.suffix];
  const piece = (s: Special) => `${s.token}:${s.type}`;
  const template = [
    ...layout.prefix.map(piece),
    `$A:${layout.premiseType}`,
    ...layout.middle.map(piece),
    `$B:${layout.hypothesisType}`,
    ...layout.suffix.map(piece),
  ].join(' ');
  return {
    prefix: ids(layout.prefix),
    middle: ids(layout.middle),
    suffix: ids(layout.suffix),
    prefixTypes: types(layout.prefix),
    middleTypes: types(layout.middle),
    suffixTypes: types(layout.suffix),
    premiseType: layout.premiseType,
    hypothesisType: layout.hypothesisType,
    specials: all.length,
    segmentsAllZero: layout.premiseType === 0 && layout.hypothesisType === 0 && all.every((s) => s.type === 0),
    processor,
    template,
  };
}

/** No special tokens; the second text has segment id 1 (the library encodes a pair's second text with type 1). */
const PLAIN: Layout = { prefix: [], middle: [], suffix: [], premiseType: 0, hypothesisType: 1 };

function layoutOf(post: PostProcessorJson, tokenId: (token: string) => number | undefined, file?: string): { layout: Layout; processor: string } {
  if (post === null || post === undefined) return { layout: PLAIN, processor: 'none' };
  const type = String(post.type);
  switch (type) {
    case 'RobertaProcessing': {
      // The library sets every segment id of a RoBERTa pair to 0 (RoBERTa has one segment embedding).
      const cls = tokenPair(post.cls, 'cls', file, 0);
      const sep = tokenPair(post.sep, 'sep', file, 0);
      return { layout: { prefix: [cls], middle: [sep, sep], suffix: [sep], premiseType: 0, hypothesisType: 0 }, processor: type };
    }
    case 'BertProcessing': {
      const cls = tokenPair(post.cls, 'cls', file, 0);
      const sep = tokenPair(post.sep, 'sep', file, 0);
      return { layout: { prefix: [cls], middle: [sep], suffix: [{ ...sep, type: 1 }], premiseType: 0, hypothesisType: 1 }, processor: type };
    }
    case 'TemplateProcessing':
      return { layout: templateLayout(post, tokenId, file), processor: type };
    case 'ByteLevel':
      // Trims offsets only: the pair is the two texts as they are.
      return { layout: PLAIN, processor: type };
    case 'Sequence': {
      // The library runs each in turn; ByteLevel touches only offsets, so at most one member may add tokens.
      const members = Array.isArray(post.processors) ? (post.processors as PostProcessorJson[]) : [];
      const adding = members.filter((m) => m?.type !== 'ByteLevel');
      if (adding.length > 1) {
        throw new InputError(`tokenizer post-processor Sequence has ${adding.length} members that add tokens (${adding.map((m) => m?.type).join(', ')}): todeval cannot tell the pair encoding`, { file });
      }
      if (adding.length === 0) return { layout: PLAIN, processor: 'Sequence(ByteLevel)' };
      const inner = layoutOf(adding[0], tokenId, file);
      return { layout: inner.layout, processor: `Sequence(${inner.processor})` };
    }
    default:
      throw new InputError(`tokenizer post-processor ${type} is not one todeval knows (RobertaProcessing, BertProcessing, TemplateProcessing, ByteLevel, Sequence)`, { file });
  }
}

/** A `[token, id]` pair of RobertaProcessing/BertProcessing. */
function tokenPair(value: unknown, name: string, file: string | undefined, type: number): Special {
  if (!Array.isArray(value) || typeof value[0] !== 'string' || !Number.isInteger(value[1])) {
    throw new InputError(`tokenizer post-processor has no usable ${name} token (expected ["token", id])`, { file });
  }
  return { token: value[0], id: value[1] as number, type };
}

interface TemplatePiece {
  SpecialToken?: { id: string; type_id: number };
  Sequence?: { id: 'A' | 'B'; type_id: number };
}

/**
 * TemplateProcessing's `pair` template: the premise ($A) once, then the hypothesis ($B) once, with
 * special tokens anywhere around them; each special token's ids come from the template's
 * special_tokens table (one entry may stand for several ids).
 */
function templateLayout(post: Record<string, unknown>, tokenId: (token: string) => number | undefined, file?: string): Layout {
  const pieces = post.pair as TemplatePiece[] | undefined;
  if (!Array.isArray(pieces)) throw new InputError('tokenizer TemplateProcessing has no pair template', { file });
  const table = (post.special_tokens ?? {}) as Record<string, { ids?: number[]; tokens?: string[] }>;
  const layout: Layout = { prefix: [], middle: [], suffix: [], premiseType: 0, hypothesisType: 0 };
  let seen = 0;
  for (const piece of pieces) {
    if (piece.Sequence) {
      const expected = seen === 0 ? 'A' : 'B';
      if (piece.Sequence.id !== expected || seen === 2) {
        throw new InputError('tokenizer TemplateProcessing pair template must hold $A once and then $B once', { file });
      }
      if (seen === 0) layout.premiseType = piece.Sequence.type_id;
      else layout.hypothesisType = piece.Sequence.type_id;
      seen++;
    } else if (piece.SpecialToken) {
      const name = piece.SpecialToken.id;
      const entry = table[name];
      const ids = entry?.ids ?? (tokenId(name) !== undefined ? [tokenId(name)!] : undefined);
      if (!ids || ids.length === 0) throw new InputError(`tokenizer TemplateProcessing names special token ${name}, which has no id`, { file });
      const tokens = entry?.tokens && entry.tokens.length === ids.length ? entry.tokens : ids.map(() => name);
      const into = seen === 0 ? layout.prefix : seen === 1 ? layout.middle : layout.suffix;
      ids.forEach((id, i) => into.push({ token: tokens[i], id, type: piece.SpecialToken!.type_id }));
    }
  }
  if (seen !== 2) throw new InputError('tokenizer TemplateProcessing pair template must hold $A once and then $B once', { file });
  return layout;
}

/**
 * The pair template a signature names: absent for RoBERTa's, which every signature had before
 * pair encodings were read from the tokenizer, so those runs keep their signatures.
 */
export function signatureEncoding(template: string): string | undefined {
  return template === ROBERTA_PAIR_TEMPLATE ? undefined : template;
}

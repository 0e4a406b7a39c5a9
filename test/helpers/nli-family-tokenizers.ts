import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TOKENIZER_DIR } from './shared.js';

/**
 * tokenizer.json files of each cross-encoder family, built here with the family's post-processor
 * (and a small vocabulary of the words the tests use), in the layout the Hugging Face tokenizers
 * library writes; @huggingface/tokenizers loads them, so our pair encoding can be checked against
 * the library's own on each.
 */

/** Words of the sample sentences, so WordPiece/Unigram vocabularies cover them (the rest is [UNK]). */
const WORDS = [
  'the', 'a', 'is', 'in', 'at', 'of', 'to', 'and', 'for', 'i', 'you', 'it', 'want', 'book', 'table', 'restaurant', 'name', 'city',
  'new', 'york', 'hotel', 'cheap', 'expensive', 'price', 'range', 'moderate', 'what', 'about', 'queens', 'hair', 'stylist', 'cut',
  'there', 'are', 'no', 'free', 'rooms', 'time', 'pm', 'on', 'monday', 'fornaio', 'il', 'san', 'jose', 'found', 'places', 'serves',
  'italian', 'food', 'near', 'center', 'train', 'leaves', 'arrives', 'rating', 'phone', 'number', 'address',
];
const PUNCT = ['.', ',', '?', '!', "'", ':', '-'];
const DIGITS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];
const PIECES = ['##s', '##ed', '##ing', '##0', '##1', '##2', '##3', '##4', '##5', '##6', '##7', '##8', '##9'];

function added(id: number, content: string) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

/** BERT's specials at BERT's ids ([PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103), words after. */
function wordPieceVocab(): { vocab: Record<string, number>; specials: Record<string, number> } {
  const specials = { '[PAD]': 0, '[UNK]': 100, '[CLS]': 101, '[SEP]': 102, '[MASK]': 103 };
  const vocab: Record<string, number> = { ...specials };
  let id = 1000;
  for (const w of [...WORDS, ...PUNCT, ...DIGITS, ...PIECES]) vocab[w] = id++;
  return { vocab, specials };
}

function wordPieceTokenizer(postProcessor: object): object {
  const { vocab, specials } = wordPieceVocab();
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: Object.entries(specials).map(([t, id]) => added(id, t)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: postProcessor,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

/** A two-sequence template with segment ids 0 then 1, as BERT-style hub tokenizers write it. */
function bertTemplate(cls: [string, number], sep: [string, number]): object {
  const special = (t: string, type: number) => ({ SpecialToken: { id: t, type_id: type } });
  const seq = (s: 'A' | 'B', type: number) => ({ Sequence: { id: s, type_id: type } });
  return {
    type: 'TemplateProcessing',
    single: [special(cls[0], 0), seq('A', 0), special(sep[0], 0)],
    pair: [special(cls[0], 0), seq('A', 0), special(sep[0], 0), seq('B', 1), special(sep[0], 1)],
    special_tokens: {
      [cls[0]]: { id: cls[0], ids: [cls[1]], tokens: [cls[0]] },
      [sep[0]]: { id: sep[0], ids: [sep[1]], tokens: [sep[0]] },
    },
  };
}

/** BERT (bert-base-uncased's layout): WordPiece, BertProcessing. */
export function bertTokenizerJson(): object {
  return wordPieceTokenizer({ type: 'BertProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] });
}

/** MiniLM / ELECTRA cross-encoders (cross-encoder/nli-MiniLM2-L6-H768, ...): WordPiece, TemplateProcessing. */
export function templateBertTokenizerJson(): object {
  return wordPieceTokenizer(bertTemplate(['[CLS]', 101], ['[SEP]', 102]));
}

/**
 * DeBERTa-v3 (microsoft/deberta-v3-*, MoritzLaurer's NLI models): a SentencePiece Unigram model
 * behind Metaspace, [PAD] 0 [CLS] 1 [SEP] 2 [UNK] 3, TemplateProcessing with segment ids 0 then 1.
 */
export function debertaV3TokenizerJson(): object {
  const specials: [string, number][] = [
    ['[PAD]', 0],
    ['[CLS]', 1],
    ['[SEP]', 2],
    ['[UNK]', 3],
  ];
  const vocab: [string, number][] = specials.map(([t]) => [t, 0]);
  for (const w of WORDS) vocab.push([`\u2581${w}`, -5 - w.length / 10]);
  for (const c of 'abcdefghijklmnopqrstuvwxyz') vocab.push([c, -12]);
  for (const p of [...PUNCT, ...DIGITS]) vocab.push([p, -8]);
  vocab.push(['\u2581', -9]);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map(([t, id]) => added(id, t)),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Replace', pattern: { String: '``' }, content: '"' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    post_processor: bertTemplate(['[CLS]', 1], ['[SEP]', 2]),
    decoder: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 3, vocab, byte_fallback: false },
  };
}

/** The shipped RoBERTa tokenizer.json (also BART's byte-level BPE vocabulary) with another post-processor. */
export function robertaBpeTokenizerJson(postProcessor?: object | null): object {
  const json = JSON.parse(readFileSync(path.join(TOKENIZER_DIR, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
  if (postProcessor !== undefined) json.post_processor = postProcessor;
  return json;
}

/**
 * BART (facebook/bart-large-mnli): RoBERTa's byte-level BPE; its tokenizer.json joins a pair with
 * RobertaProcessing, `<s> A </s></s> B </s>`, all segment ids 0.
 */
export function bartTokenizerJson(): object {
  return robertaBpeTokenizerJson({ type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: false });
}

/** Newer byte-level exports: Sequence [ByteLevel, TemplateProcessing] (`<s> A </s> </s> B </s>` written as a template). */
export function byteLevelTemplateTokenizerJson(): object {
  const special = (t: string) => ({ SpecialToken: { id: t, type_id: 0 } });
  const seq = (s: 'A' | 'B') => ({ Sequence: { id: s, type_id: 0 } });
  return robertaBpeTokenizerJson({
    type: 'Sequence',
    processors: [
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      {
        type: 'TemplateProcessing',
        single: [special('<s>'), seq('A'), special('</s>')],
        pair: [special('<s>'), seq('A'), special('</s>'), special('</s>'), seq('B'), special('</s>')],
        special_tokens: { '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
      },
    ],
  });
}

/** config.json fields of each family the tokenizer reads (model_type, positions, padding id). */
export const FAMILY_CONFIGS: Record<string, Record<string, unknown>> = {
  bert: { model_type: 'bert', max_position_embeddings: 512, pad_token_id: 0, type_vocab_size: 2 },
  electra: { model_type: 'electra', max_position_embeddings: 512, pad_token_id: 0, type_vocab_size: 2 },
  'deberta-v2': { model_type: 'deberta-v2', max_position_embeddings: 512, pad_token_id: 0, type_vocab_size: 0 },
  bart: { model_type: 'bart', max_position_embeddings: 1024, pad_token_id: 1 },
};

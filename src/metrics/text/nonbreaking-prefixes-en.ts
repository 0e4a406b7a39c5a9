/**
 * English nonbreaking prefixes for the Moses tokenizer: a word from this list followed by a
 * period is an abbreviation, not the end of a sentence, so the period stays attached.
 *
 * Origin: the word list `nonbreaking_prefix.en` of the Moses SMT toolkit
 * (github.com/moses-smt/mosesdecoder, scripts/share/nonbreaking_prefixes, LGPL-2.1), as shipped
 * unchanged by sacremoses (github.com/alvations/sacremoses, now hplt-project/sacremoses, MIT,
 * sacremoses/data/nonbreaking_prefixes/nonbreaking_prefix.en) which mwzeval uses. Only the words
 * are kept here (no comments), split into the two kinds the tokenizer distinguishes. It is a
 * factual list of English abbreviations; keep it byte-identical in content to the upstream list so
 * tokenization stays comparable.
 */

/** Prefixes that never end a sentence: single capitals (initials), titles, misc, months. */
export const NONBREAKING_PREFIXES_EN: readonly string[] = [
  // single upper-case letters (initials)
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''),
  // titles
  'Adj', 'Adm', 'Adv', 'Asst', 'Bart', 'Bldg', 'Brig', 'Bros', 'Capt', 'Cmdr', 'Col', 'Comdr',
  'Con', 'Corp', 'Cpl', 'DR', 'Dr', 'Drs', 'Ens', 'Gen', 'Gov', 'Hon', 'Hr', 'Hosp', 'Insp', 'Lt',
  'MM', 'MR', 'MRS', 'MS', 'Maj', 'Messrs', 'Mlle', 'Mme', 'Mr', 'Mrs', 'Ms', 'Msgr', 'Op', 'Ord',
  'Pfc', 'Ph', 'Prof', 'Pvt', 'Rep', 'Reps', 'Res', 'Rev', 'Rt', 'Sen', 'Sens', 'Sfc', 'Sgt', 'Sr',
  'St', 'Supt', 'Surg',
  // misc
  'v', 'vs', 'i.e', 'rev', 'e.g', 'Rs',
  // number abbreviations that upstream does not mark numeric-only
  'Nos', 'Nr',
  // months (May is a full word)
  'Jan', 'Feb', 'Mar', 'Apr', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec',
];

/** Prefixes marked `#NUMERIC_ONLY#` upstream: nonbreaking only when a number follows ("No. 5"). */
export const NUMERIC_ONLY_PREFIXES_EN: readonly string[] = ['No', 'Art', 'pp'];

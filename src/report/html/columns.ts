/**
 * A column of the runs table. The main columns are the numbers runs are compared by; the others
 * collapse into a detail row under each run, so the table fits 1,280 px however many columns are
 * added. The significance columns ("±", "vs baseline") are made per report (significanceColumns in
 * page-data.ts): their metric, level and baseline depend on the runs.
 */
export interface RunColumn {
  key: string;
  label: string;
  /** Digits after the point (0: a count with thousands separators); absent for text. */
  digits?: number;
  /** Shown in the run's detail row, not as a column. */
  detail?: boolean;
  /** What the header's tooltip says. */
  title?: string;
  /** A stand-in model's value in this column is not SGSAcc (the cell says so in its tooltip). */
  sgsacc?: boolean;
  /**
   * 'pvalue': a p-value against the baseline run, marked * at or below `alpha`; the baseline's own
   * cell (run named `baseline`) says so. 'pm': a half-width, written "± 0.60".
   */
  format?: 'pvalue' | 'pm';
  alpha?: number;
  baseline?: string;
}

export const RUN_COLUMNS: readonly RunColumn[] = [
  { key: 'validated', label: 'SGSAcc validated', digits: 2, sgsacc: true, title: 'percent of validated turns whose every action the utterance entails' },
  { key: 'validatedSeen', label: 'seen', digits: 2, sgsacc: true, title: 'validated SGSAcc on turns of seen services' },
  { key: 'validatedUnseen', label: 'unseen', digits: 2, sgsacc: true, title: 'validated SGSAcc on turns with an unseen service' },
  { key: 'unvalidated', label: 'SGSAcc unvalidated', digits: 2, sgsacc: true, title: 'SGSAcc over every scorable turn' },
  { key: 'ser', label: 'SER %', digits: 2, title: 'slot error rate' },
  { key: 'bleu', label: 'BLEU', digits: 2 },
  { key: 'inform', label: 'Inform', digits: 1 },
  { key: 'success', label: 'Success', digits: 1 },
  { key: 'model', label: 'NLI model', detail: true },
  { key: 'turns', label: 'turns', digits: 0, detail: true },
  { key: 'evaluated', label: 'validated turns', digits: 0, detail: true },
  { key: 'excluded', label: 'excluded turns', digits: 0, detail: true },
  { key: 'rescued', label: 'actions credited through the context', digits: 0, detail: true },
  { key: 'contextOnly', label: 'context rescues the context alone entails', digits: 0, detail: true },
  { key: 'contextControl', label: 'context-only control', detail: true },
  { key: 'richness', label: 'unique trigrams', digits: 0, detail: true },
];

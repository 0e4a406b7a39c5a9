// sacreBLEU's WMT17 test systems for the parity tests: they need a sacreBLEU source checkout in
// SACREBLEU_DIR, and the tests skip, saying why, without one.
import { readWmt17, type Wmt17Systems } from '../../scripts/lib/sacrebleu-wmt17.js';

export type { Wmt17Systems };

/** The WMT17 systems of $SACREBLEU_DIR, or why they cannot be read. */
export function loadWmt17(): Wmt17Systems | string {
  const dir = process.env.SACREBLEU_DIR;
  if (!dir) return 'SACREBLEU_DIR is not set (a sacreBLEU source checkout: git clone https://github.com/mjpost/sacrebleu)';
  try {
    return readWmt17(dir);
  } catch (e) {
    return (e as Error).message;
  }
}

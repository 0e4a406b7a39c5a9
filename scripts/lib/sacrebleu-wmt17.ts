/**
 * The WMT17 en-de systems that sacreBLEU's own test suite ships (test/wmt17_en_de_systems.pkl.bz2
 * in a sacreBLEU source checkout): 16 systems and one reference stream of 3,004 segments. It is a
 * pickle, so python reads it; nothing of it is copied into this repository.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

export interface Wmt17Systems {
  /** [name, one line per segment] for the 16 systems, in the pickle's order. */
  systems: [string, string[]][];
  /** One reference stream. */
  refs: string[][];
  /** Where they were read from. */
  file: string;
}

/**
 * The systems of a sacreBLEU checkout; rejects with a one-line reason when they cannot be read.
 * Python runs as an asynchronous child: a test worker that waited on it synchronously could not
 * answer vitest's RPC meanwhile (the "Timeout calling onTaskUpdate" of a loaded machine).
 */
export async function readWmt17(checkout: string, python = 'python3'): Promise<Wmt17Systems> {
  const pkl = path.join(checkout, 'test', 'wmt17_en_de_systems.pkl.bz2');
  if (!existsSync(pkl)) throw new Error(`${pkl} is absent: a sacreBLEU source checkout has it (git clone https://github.com/mjpost/sacrebleu)`);
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(python, ['-c', 'import bz2,json,pickle,sys; json.dump(pickle.load(bz2.BZ2File(sys.argv[1])), sys.stdout)', pkl], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  } catch (e) {
    throw new Error(`${python} could not read ${pkl}: ${(e as { stderr?: string }).stderr || (e as Error).message}`);
  }
  const named = JSON.parse(stdout) as [string, unknown][];
  const [, refs] = named.pop() as [string, string[][]];
  return { systems: named as [string, string[]][], refs, file: pkl };
}

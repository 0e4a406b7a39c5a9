// The MultiWOZ references as BLEU scores them are kept beside the ground truth's cache, named by a
// digest of the code that derives them: that code must be exactly the files the digest reads, and
// what the cache holds must be what the code derives now.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Evaluator } from '../../src/metrics/mwz/evaluator.js';
import { groundTruthLabel, loadGroundTruth } from '../../src/metrics/mwz/ground-truth.js';
import { SCORED_REFERENCES_CODE, SCORED_REFERENCES_FILES, scoredReferences, scoredReferencesCode } from '../../src/metrics/mwz/scored-references.js';
import { BleuReferences, tokenize13a } from '../../src/metrics/text/bleu.js';
import { normalizeResponse } from '../../src/metrics/text/normalize-response.js';
import { pyRstrip } from '../../src/metrics/text/py-string.js';
import { REPO_ROOT } from '../helpers/shared.js';
import { tempDir } from '../helpers/temp.js';

const MWZ = path.join(REPO_ROOT, 'src', 'metrics', 'mwz');

/** The project files a source file imports (relative specifiers, .js written for .ts), and theirs. */
function importClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/^(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)) {
    importClosure(path.resolve(path.dirname(file), m[1].replace(/\.js$/, '.ts')), seen);
  }
  return seen;
}

describe('the code digest in the name of the scored references cache', () => {
  it('covers every project module the scored references are derived with', () => {
    const listed = SCORED_REFERENCES_CODE.map((m) => path.resolve(MWZ, `${m}.ts`)).sort();
    expect([...importClosure(path.join(MWZ, 'scored-references.ts'))].sort()).toEqual(listed);
  });

  it('is the digest of those files as this process runs them', () => {
    // The tests import src/ as dist/'s compiled twin (vitest.config.ts), or the sources themselves
    // (vitest's watch mode): the module digests the twin it runs from, its own file among them.
    const twin = (dir: string, ext: string) => SCORED_REFERENCES_CODE.map((m) => path.resolve(dir, `${m}${ext}`));
    const own = SCORED_REFERENCES_FILES[0].endsWith('.ts') ? twin(MWZ, '.ts') : twin(path.join(REPO_ROOT, 'dist', 'src', 'metrics', 'mwz'), '.js');
    expect(SCORED_REFERENCES_FILES.map((f) => realpathSync(f))).toEqual(own.map((f) => realpathSync(f)));
    expect(scoredReferencesCode()).toBe(codeDigestOf(own));
  });

  it('describes the code loaded, not the files as they are when the first ground truth is read', () => {
    // dist/'s build of the digested modules, copied with their layout (Node runs them as ES modules
    // by the package.json beside them), loaded in a child process; a normalizer is then edited, as
    // an upgrade of the package under a running process would: the digest stays that of the code
    // that was loaded.
    const root = tempDir('scored-code');
    const dist = path.join(REPO_ROOT, 'dist', 'src', 'metrics', 'mwz');
    const copies = SCORED_REFERENCES_CODE.map((m) => {
      const copy = path.resolve(root, 'dist', 'src', 'metrics', 'mwz', `${m}.js`);
      mkdirSync(path.dirname(copy), { recursive: true });
      copyFileSync(path.resolve(dist, `${m}.js`), copy);
      return copy;
    });
    writeFileSync(path.join(root, 'package.json'), '{"type": "module"}\n');
    const loaded = codeDigestOf(copies);
    const edited = copies[SCORED_REFERENCES_CODE.indexOf('../text/normalize-response')];
    const code = [
      `const m = await import(${JSON.stringify(pathToFileURL(copies[0]).href)});`,
      `(await import('node:fs')).appendFileSync(${JSON.stringify(edited)}, '\\n// edited after the import\\n');`,
      'process.stdout.write(String(m.scoredReferencesCode()));',
    ].join('\n');
    const printed = execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
    expect(codeDigestOf(copies)).not.toBe(loaded); // the edit happened, and changes the digest of the files
    expect(printed).toBe(loaded);
  });
});

/** scoredReferencesCode's digest of these files' bytes as they are now. */
function codeDigestOf(files: readonly string[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(readFileSync(f)).update('\0');
  return h.digest('hex').slice(0, 12);
}

describe('scored references', () => {
  it('are normalizeResponse then BLEU preprocessing; BLEU from them equals BLEU from the normalized text', () => {
    const raw = ['Try [name] ! Phone [phone] .', 'I have [value_count] trains ,  leaving at [leaveat].  ', 'The [restaurant_name]-s are cheap-ly priced.'];
    const s = scoredReferences(raw);
    expect(s.text).toEqual(raw.map((r) => normalizeResponse(r).text));
    expect(s.tokens13a).toEqual(s.text.map((t) => tokenize13a(pyRstrip(t))));
    const hyps = ['try NAME ! phone PHONE .', 'there are COUNT trains leaving at TIME .', 'the NAME are cheap priced'];
    expect(BleuReferences.preprocessed([s.tokens13a]).score(hyps)).toEqual(new BleuReferences([s.text]).score(hyps));
  });
});

/** A data dir with a two-dialogue MultiWOZ 2.1 test file, a venue database and booked domains. */
function fakeDataDir(): string {
  const dir = tempDir('scored-refs');
  const mwz = path.join(dir, 'multiwoz');
  mkdirSync(path.join(mwz, 'db'), { recursive: true });
  const turn = (text: string, spans: unknown[][] = []) => ({ text, metadata: {}, span_info: spans });
  const convlab = {
    'SNG0001.json': { goal: {}, log: [turn('i need a place to eat'), turn('Try Bangkok City ! Phone 01223 .', [['Restaurant-Inform', 'Name', 'Bangkok City', 1, 2], ['Restaurant-Inform', 'Phone', '01223', 5, 5]])] },
    'MUL0002.json': { goal: {}, log: [turn('a train please'), turn('There are 4 trains , the first leaves at 05:00 .', [['Train-Inform', 'Choice', '4', 2, 2], ['Train-Inform', 'Leave', '05:00', 8, 8]])] },
  };
  writeFileSync(path.join(mwz, 'convlab_mwz21_test.json'), JSON.stringify(convlab));
  writeFileSync(path.join(mwz, 'booked_domains.json'), '{"sng0001": [[]], "mul0002": [[]]}');
  for (const d of ['restaurant', 'hotel', 'attraction', 'train', 'taxi']) writeFileSync(path.join(mwz, 'db', `${d}_db.json`), `[{"name": "${d} one"}]`);
  return dir;
}

describe('the ground-truth cache', () => {
  it('keeps the scored references and the inputs content digests beside it, and a run from them scores and signs as a run that built them', () => {
    const dir = fakeDataDir();
    const fresh = loadGroundTruth(dir, { noCache: true });
    const built = loadGroundTruth(dir);
    const cached = loadGroundTruth(dir);
    expect(cached.cacheFile).toBe(built.cacheFile);
    // The ground-truth file keeps the shape (and name) it has always had, so every version reads it;
    // the scored references lie beside it under the code's digest, with the inputs' content digests.
    const file = JSON.parse(readFileSync(cached.cacheFile!, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(file)).toEqual(['source', 'builderVersion', 'inputsDigest', 'dialogues']);
    expect(file.dialogues).toEqual(Object.fromEntries(Object.entries(fresh.dialogues).map(([id, { scored: _s, ...d }]) => [id, d])));
    const beside = JSON.parse(readFileSync(cached.cacheFile!.replace(/\.json$/, `.scored-${scoredReferencesCode()}.json`), 'utf8')) as Record<string, unknown>;
    expect(beside.scored).toEqual(Object.fromEntries(Object.entries(fresh.dialogues).map(([id, d]) => [id, d.scored])));
    expect(beside.inputsContent).toEqual(fresh.inputsContent);
    expect(cached.inputsContent).toEqual([createHash('sha256').update(readFileSync(path.join(dir, 'multiwoz', 'convlab_mwz21_test.json'))).digest('hex').slice(0, 12)]);
    for (const d of Object.values(cached.dialogues)) expect(d.scored).toEqual(scoredReferences(d.references));
    expect(cached.dialogues.sng0001.scored).toEqual({ text: ['try NAME! phone PHONE.'], tokens13a: ['try NAME ! phone PHONE .'] });

    const predictions = { sng0001: [{ response: 'Try [restaurant_name], phone [restaurant_phone].' }], mul0002: [{ response: 'There are [value_count] trains.' }] };
    const metrics = { bleu: true, success: true, richness: true, chrf: true, ter: true };
    const rebuilt = new Evaluator({ dataDir: dir, ...metrics, noCache: true }).evaluate(predictions);
    const fromCache = new Evaluator({ dataDir: dir, ...metrics }).evaluate(predictions);
    expect({ ...fromCache, details: { ...fromCache.details, ground_truth_cache: undefined } }).toEqual({ ...rebuilt, details: { ...rebuilt.details, ground_truth_cache: undefined } });
    expect((fromCache.signature as Record<string, unknown>).data).toBe(groundTruthLabel(dir, 'multiwoz21-convlab'));
  });

  it('of other inputs is not read: a changed file gives a new cache and the new digest', () => {
    const dir = fakeDataDir();
    const file = path.join(dir, 'multiwoz', 'convlab_mwz21_test.json');
    const first = loadGroundTruth(dir);
    const text = readFileSync(file, 'utf8').replace('Bangkok City', 'Bangkok Town');
    writeFileSync(file, text);
    const later = new Date(Date.now() + 5000);
    utimesSync(file, later, later);
    const second = loadGroundTruth(dir);
    expect(second.cacheFile).not.toBe(first.cacheFile);
    expect(second.inputsContent).not.toEqual(first.inputsContent);
    expect(second.inputsContent[0]).toBe(createHash('sha256').update(text).digest('hex').slice(0, 12));
  });

  it('beside it, when damaged (a dialogue without its lists), is rebuilt: evaluate scores as without the cache', () => {
    const dir = fakeDataDir();
    const built = loadGroundTruth(dir);
    const scoredFile = built.cacheFile!.replace(/\.json$/, `.scored-${scoredReferencesCode()}.json`);
    const doc = JSON.parse(readFileSync(scoredFile, 'utf8')) as { scored: Record<string, unknown> };
    writeFileSync(scoredFile, JSON.stringify({ ...doc, scored: { sng0001: {}, mul0002: { text: [], tokens13a: [] } } }));
    const predictions = { sng0001: [{ response: 'Try [restaurant_name], phone [restaurant_phone].' }], mul0002: [{ response: 'There are [value_count] trains.' }] };
    const metrics = { bleu: true, chrf: true, ter: true };
    const fromCache = new Evaluator({ dataDir: dir, ...metrics }).evaluate(predictions);
    const rebuilt = new Evaluator({ dataDir: dir, ...metrics, noCache: true }).evaluate(predictions);
    expect({ ...fromCache, details: { ...fromCache.details, ground_truth_cache: undefined } }).toEqual({ ...rebuilt, details: { ...rebuilt.details, ground_truth_cache: undefined } });
    // ...and written again whole.
    expect((JSON.parse(readFileSync(scoredFile, 'utf8')) as typeof doc).scored).toEqual(Object.fromEntries(Object.entries(built.dialogues).map(([id, d]) => [id, d.scored])));
  });

  it('beside a ground truth rebuilt from changed bytes of the same size and mtime is derived again, not read', () => {
    const dir = fakeDataDir();
    const file = path.join(dir, 'multiwoz', 'convlab_mwz21_test.json');
    // A whole-second mtime, set again after the edit: the inputs' stamp (size and mtime) stays the same.
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const first = loadGroundTruth(dir);
    const text = readFileSync(file, 'utf8').replace('Try Bangkok', 'Tri Bangkok');
    writeFileSync(file, text);
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    // The user deletes the ground-truth cache to have it rebuilt from the new bytes.
    rmSync(first.cacheFile!);
    const second = loadGroundTruth(dir);
    expect(second.cacheFile).toBe(first.cacheFile);
    expect(second.dialogues.sng0001.references[0]).toMatch(/^Tri /);
    for (const d of Object.values(second.dialogues)) expect(d.scored).toEqual(scoredReferences(d.references));
    expect(second.inputsContent).toEqual([createHash('sha256').update(text).digest('hex').slice(0, 12)]);
    // The next run reads both files, and what this one derived.
    expect(loadGroundTruth(dir).dialogues).toEqual(second.dialogues);
  });

  it('that cannot be written leaves no temporary file behind; the run goes on without naming it', () => {
    const dir = fakeDataDir();
    const cacheFile = loadGroundTruth(dir).cacheFile!;
    const cacheDir = path.dirname(cacheFile);
    for (const f of readdirSync(cacheDir)) rmSync(path.join(cacheDir, f));
    // A folder where the ground-truth file goes: writing it fails.
    mkdirSync(cacheFile);
    const gt = loadGroundTruth(dir);
    expect(gt.cacheFile).toBeUndefined();
    expect(Object.keys(gt.dialogues)).toEqual(['sng0001', 'mul0002']);
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

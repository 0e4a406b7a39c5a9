import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { dataFile } from '../../data/data-dir.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { bytesDigest, inputsContentDigest, rememberContentDigest } from '../../util/input-label.js';
import { readJsonFile, type FileRead } from '../../util/json-file.js';
import { filesStamp, StampedCache, userCacheDir } from '../../util/stamped-cache.js';
import { deepFreeze, holdingMwzData } from './held-data.js';
import { type BeliefState, normalizeState, normalizeStateSlotName, normalizeStateSlotValue } from './normalize-state.js';
import { scoredReferences, scoredReferencesCode, type ScoredReferences } from './scored-references.js';

/**
 * Ground truth of the MultiWOZ test set in the shape mwzeval's bundled files have (goals.json,
 * gold_states.json, references/mwz22.json), derived deterministically from the data dir:
 *
 * - `multiwoz21-convlab` (default): goals, belief states (`metadata`) and span annotations
 *   (`span_info`, word offsets) of `multiwoz/convlab_mwz21_test.json`.
 * - `multiwoz22`: states and span annotations (character offsets) from the MultiWOZ 2.2 files in
 *   `multiwoz/mwz22/` (`dialog_acts.json` + `dialogues_*.json`, also under `test/`), which is what
 *   mwzeval used; goals still come from the 2.1 file because MultiWOZ 2.2 has none.
 *
 * References are stored delexicalized with MultiWOZ 2.2 slot names but not normalized, so the cache
 * file does not depend on the text normalizer. The references as BLEU scores them (`scored`:
 * normalized, 13a-tokenized) are kept in a file beside it whose name carries a digest of the code
 * that derives them (scored-references.ts), so that another normalizer never reads this one's.
 */

export type GroundTruthSource = 'multiwoz21-convlab' | 'multiwoz22';

/** Bump when the derivation changes so stale caches are rebuilt. */
export const GROUND_TRUTH_BUILDER_VERSION = 3;

export interface MwzGoalDomain {
  /** Search constraints of the final goal, state-normalized (arrive/leave, canonical values). */
  informable: Record<string, string>;
  /** Requestable placeholders Success checks: PHONE, ADDRESS, POST, REFERENCE, TRAINID. */
  requestable: string[];
  booking: Record<string, string>;
}
export type MwzGoal = Record<string, MwzGoalDomain>;

export interface GroundTruthDialogue {
  goal: MwzGoal;
  /** Belief state before each system turn, normalized. */
  states: BeliefState[];
  /** Delexicalized human response of each system turn (`[slot]` placeholders, raw case). */
  references: string[];
  /** The references as mwzeval's BLEU (and chrF, TER) score them. */
  scored: ScoredReferences;
  /**
   * Domains of each system turn from annotations (state changes plus system dialogue-act domains,
   * else the previous turn's), as DAMD derives them; used by the optimistic variant.
   */
  goldDomains: string[][];
}

export interface GroundTruth {
  source: GroundTruthSource;
  builderVersion: number;
  /** Digest of the input files' names, sizes and mtimes. */
  inputsDigest: string;
  /**
   * contentDigest of each input file (groundTruthInputs' order), of the bytes it was built from: a
   * run that finds the cache signs its data without reading the files again (33 MB for MultiWOZ 2.1).
   */
  inputsContent: string[];
  dialogues: Record<string, GroundTruthDialogue>;
}

/** A dialogue as the sources give it: its references not yet scored. */
type BuiltDialogue = Omit<GroundTruthDialogue, 'scored'>;

/** The ground-truth cache file (the shape it has always had). */
interface GroundTruthFile {
  source: GroundTruthSource;
  builderVersion: number;
  inputsDigest: string;
  dialogues: Record<string, BuiltDialogue>;
}

/** The file beside it: what one version of the scoring code derives from it, and the inputs' content digests. */
interface ScoredFile {
  builderVersion: number;
  inputsDigest: string;
  code: string;
  inputsContent: string[];
  scored: Record<string, ScoredReferences>;
}

export const GOAL_DOMAINS = ['restaurant', 'hotel', 'attraction', 'train', 'taxi', 'police', 'hospital'];
const EXTRACTED_REQUESTABLES: Record<string, string> = {
  phone: 'PHONE',
  address: 'ADDRESS',
  postcode: 'POST',
  reference: 'REFERENCE',
  id: 'TRAINID',
};

interface ConvlabGoalDomain {
  info?: Record<string, string>;
  reqt?: string[];
  book?: Record<string, unknown>;
}

/**
 * The original MultiWOZ evaluator's goal parsing, which mwzeval's goals.json follows: trains only
 * count the reference (when booked) and the train id (when requested); other domains count the
 * phone/address/postcode requests plus the reference when a booking is part of the goal.
 */
export function parseGoal(raw: Record<string, unknown>): MwzGoal {
  const goal: MwzGoal = {};
  for (const domain of GOAL_DOMAINS) {
    const g = raw[domain] as ConvlabGoalDomain | undefined;
    if (!g || Object.keys(g).length === 0) continue;
    const requestable: string[] = [];
    if (g.info) {
      if (domain === 'train') {
        if (g.book) requestable.push('REFERENCE');
        if (g.reqt?.includes('trainID')) requestable.push('TRAINID');
      } else {
        for (const s of g.reqt ?? []) if (EXTRACTED_REQUESTABLES[s]) requestable.push(EXTRACTED_REQUESTABLES[s]);
        if (g.book) requestable.push('REFERENCE');
      }
    }
    const informable: Record<string, string> = {};
    for (const [slot, value] of Object.entries(g.info ?? {})) {
      const s = normalizeStateSlotName(slot);
      informable[s] = normalizeStateSlotValue(s, String(value));
    }
    const booking: Record<string, string> = {};
    for (const [k, v] of Object.entries(g.book ?? {})) if (typeof v === 'string') booking[k] = v;
    goal[domain] = { informable, requestable: [...new Set(requestable)], booking };
  }
  return goal;
}

// MultiWOZ 2.1 act slot names -> the MultiWOZ 2.2 span slot names mwzeval's references use.
const SPAN_SLOT_21_TO_22: Record<string, string> = {
  addr: 'address',
  area: 'area',
  arrive: 'arriveby',
  car: 'type',
  choice: 'choice',
  day: 'day',
  depart: 'departure',
  dest: 'destination',
  department: 'department',
  fee: 'entrancefee',
  food: 'food',
  id: 'trainid',
  internet: 'internet',
  leave: 'leaveat',
  name: 'name',
  open: 'openhours',
  parking: 'parking',
  people: 'bookpeople',
  phone: 'phone',
  post: 'postcode',
  price: 'pricerange',
  ref: 'ref',
  stars: 'stars',
  stay: 'bookstay',
  ticket: 'price',
  time: 'time',
  type: 'type',
};

export interface CharSpan {
  slot: string;
  value: string;
  start: number;
  end: number;
}

/**
 * Replace annotated spans by `[slot]`, as mwzeval's MultiWOZ 2.2 reference builder does: spans in
 * order of start (stable), a span overlapping the previous one or valued "dontcare" is skipped.
 */
export function delexicalizeBySpans(utterance: string, spans: CharSpan[]): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let out = '';
  let prev = 0;
  for (const s of sorted) {
    if (s.start < prev || s.value === 'dontcare') continue;
    out += utterance.slice(prev, s.start) + `[${s.slot}]`;
    prev = s.end;
  }
  return out + utterance.slice(prev);
}

/** Word-offset spans of the ConvLab 2.1 file (inclusive end word) to character spans. */
export function wordSpansToChars(text: string, spans: unknown[][]): CharSpan[] {
  const words: { start: number; end: number }[] = [];
  for (const m of text.matchAll(/\S+/g)) words.push({ start: m.index!, end: m.index! + m[0].length });
  const out: CharSpan[] = [];
  for (const sp of spans) {
    const [, slot, value, ws, we] = sp as [string, string, string, number, number];
    const mapped = SPAN_SLOT_21_TO_22[String(slot).toLowerCase()];
    if (!mapped || !words[ws] || !words[we] || we < ws) continue;
    out.push({ slot: mapped, value: String(value), start: words[ws].start, end: words[we].end });
  }
  return out;
}

/** Domains of a dialogue-act dict ({"Restaurant-Inform": ...}), without general/booking. */
function actDomains(acts: Record<string, unknown> | undefined): string[] {
  const out = new Set<string>();
  for (const key of Object.keys(acts ?? {})) {
    const d = key.split('-')[0].toLowerCase();
    if (d !== 'general' && d !== 'booking') out.add(d);
  }
  return [...out];
}

function sameDomainState(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b![k] === a![k]);
}

export function goldTurnDomains(states: BeliefState[], acts: (Record<string, unknown> | undefined)[]): string[][] {
  const out: string[][] = [];
  let prevState: BeliefState = {};
  let prevDomains: string[] = [];
  states.forEach((state, i) => {
    const doms = new Set<string>();
    for (const d of Object.keys(state)) if (!sameDomainState(state[d], prevState[d])) doms.add(d);
    for (const d of actDomains(acts[i])) doms.add(d);
    const list = doms.size > 0 ? [...doms] : prevDomains;
    out.push(list);
    prevDomains = list;
    prevState = state;
  });
  return out;
}

/** State of a ConvLab/MultiWOZ 2.1 `metadata` in MultiWOZ 2.2 slot naming (book slots prefixed). */
export function stateFromMetadata(metadata: Record<string, { semi?: Record<string, unknown>; book?: Record<string, unknown> }>): BeliefState {
  const state: BeliefState = {};
  for (const [domain, m] of Object.entries(metadata ?? {})) {
    const slots: Record<string, string> = {};
    for (const [slot, value] of Object.entries(m.semi ?? {})) {
      if (typeof value !== 'string' || value === '' || value === 'not mentioned' || value === 'dontcare') continue;
      slots[slot] = value;
    }
    for (const [slot, value] of Object.entries(m.book ?? {})) {
      if (slot === 'booked' || typeof value !== 'string' || value === '' || value === 'not mentioned' || value === 'dontcare') continue;
      slots[`book${slot}`] = value;
    }
    if (Object.keys(slots).length > 0) state[domain] = slots;
  }
  return normalizeState(state);
}

export const dialogueKey = (id: string): string => id.split('.')[0].toLowerCase();

interface ConvlabTurn {
  text: string;
  metadata?: Record<string, { semi?: Record<string, unknown>; book?: Record<string, unknown> }>;
  dialog_act?: Record<string, unknown>;
  span_info?: unknown[][];
}

function buildFromConvlab(file: string, read?: FileRead): Record<string, BuiltDialogue> {
  const data = readJsonFile<Record<string, { goal: Record<string, unknown>; log: ConvlabTurn[] }>>(file, read);
  const out: Record<string, BuiltDialogue> = {};
  for (const [id, dial] of Object.entries(data)) {
    if (!dial || !Array.isArray(dial.log) || typeof dial.goal !== 'object') {
      throw new InputError('not a ConvLab MultiWOZ dialogue (needs goal and log)', { file, where: id });
    }
    const states: BeliefState[] = [];
    const references: string[] = [];
    const acts: (Record<string, unknown> | undefined)[] = [];
    for (let i = 1; i < dial.log.length; i += 2) {
      const turn = dial.log[i];
      states.push(stateFromMetadata(turn.metadata ?? {}));
      references.push(delexicalizeBySpans(turn.text, wordSpansToChars(turn.text, turn.span_info ?? [])));
      acts.push(turn.dialog_act);
    }
    out[dialogueKey(id)] = { goal: parseGoal(dial.goal), states, references, goldDomains: goldTurnDomains(states, acts) };
  }
  return out;
}

interface Mwz22Dialogue {
  dialogue_id: string;
  turns: {
    turn_id: string | number;
    speaker: string;
    utterance: string;
    frames: { service: string; state?: { slot_values?: Record<string, string[]> } }[];
  }[];
}
type Mwz22Acts = Record<string, Record<string, { dialog_act?: Record<string, unknown>; span_info?: unknown[][] }>>;

/** Where MultiWOZ 2.2 files are looked for: `<dataDir>/multiwoz/mwz22/`. */
export function mwz22Dir(dataDir: string): string {
  return path.join(dataDir, 'multiwoz', 'mwz22');
}

function mwz22DialogueFiles(dir: string): string[] {
  const files: string[] = [];
  for (const sub of ['', 'test']) {
    const d = path.join(dir, sub);
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d).sort()) if (/^dialogues_\d+\.json$/.test(f)) files.push(path.join(d, f));
  }
  return files;
}

export function hasMwz22(dataDir: string): boolean {
  const dir = mwz22Dir(dataDir);
  return existsSync(path.join(dir, 'dialog_acts.json')) && mwz22DialogueFiles(dir).length > 0;
}

function buildFromMwz22(dataDir: string, goals: Record<string, MwzGoal>, read?: FileRead): Record<string, BuiltDialogue> {
  const dir = mwz22Dir(dataDir);
  const actsFile = path.join(dir, 'dialog_acts.json');
  const allActs = readJsonFile<Mwz22Acts>(actsFile, read);
  const out: Record<string, BuiltDialogue> = {};
  for (const file of mwz22DialogueFiles(dir)) {
    const dialogues = readJsonFile<Mwz22Dialogue[]>(file, read);
    for (const dial of dialogues) {
      const key = dialogueKey(dial.dialogue_id);
      if (!goals[key]) continue; // train/dev dialogues: not part of the test ground truth
      const dialActs = allActs[dial.dialogue_id] ?? {};
      const states: BeliefState[] = [];
      const references: string[] = [];
      const acts: (Record<string, unknown> | undefined)[] = [];
      let state: BeliefState = {};
      dial.turns.forEach((t, i) => {
        if (i % 2 === 0) {
          state = {};
          for (const frame of t.frames ?? []) {
            const slots: Record<string, string> = {};
            for (const [name, values] of Object.entries(frame.state?.slot_values ?? {})) {
              if (values.includes('dontcare')) continue;
              slots[name.split('-')[1]] = values[0];
            }
            if (Object.keys(slots).length > 0) state[frame.service] = slots;
          }
          state = normalizeState(state);
          return;
        }
        const ann = dialActs[String(t.turn_id)] ?? {};
        const spans: CharSpan[] = (ann.span_info ?? []).map((s) => ({
          slot: String(s[1]),
          value: String(s[2]),
          start: Number(s[3]),
          end: Number(s[4]),
        }));
        states.push(state);
        references.push(delexicalizeBySpans(t.utterance, spans));
        acts.push(ann.dialog_act);
      });
      out[key] = { goal: goals[key], states, references, goldDomains: goldTurnDomains(states, acts) };
    }
  }
  const missing = Object.keys(goals).filter((k) => !out[k]);
  if (missing.length > 0) {
    throw new InputError(`MultiWOZ 2.2 files lack ${missing.length} test dialogues (e.g. ${missing.slice(0, 3).join(', ')})`, {
      file: dir,
    });
  }
  return out;
}

/** Ground truths read from the cache while holdMwzData is on, by cache file (see held-data.ts). */
const heldGroundTruth = new StampedCache<GroundTruth & { cacheFile?: string }>();

function inputsDigest(files: string[]): string {
  const h = createHash('sha256');
  for (const f of files) {
    const st = statSync(f);
    h.update(`${path.resolve(f)}|${st.size}|${st.mtimeMs}\n`);
  }
  return h.digest('hex').slice(0, 16);
}

/**
 * Cache directory: `<dataDir>/.todeval-cache/` when the data dir is writable, else the user cache
 * (`$XDG_CACHE_HOME/todeval` or `~/.cache/todeval`), e.g. for a read-only shared data dir.
 */
export function groundTruthCacheDir(dataDir: string, env = process.env): string {
  try {
    accessSync(dataDir, constants.W_OK);
    return path.join(dataDir, '.todeval-cache');
  } catch {
    return userCacheDir(env);
  }
}

export interface LoadGroundTruthOptions {
  /** Force a source; default prefers MultiWOZ 2.2 when its files are present. */
  source?: GroundTruthSource;
  /** Skip reading/writing the cache. */
  noCache?: boolean;
  /** How the data files are read when the ground truth is built (ReadDigests.read: hashed as parsed). */
  read?: FileRead;
}

export function resolveSource(dataDir: string, requested?: GroundTruthSource): GroundTruthSource {
  if (requested === 'multiwoz22' && !hasMwz22(dataDir)) {
    throw new InputError(
      `MultiWOZ 2.2 requested but ${mwz22Dir(dataDir)} lacks dialog_acts.json and dialogues_*.json`,
    );
  }
  return requested ?? (hasMwz22(dataDir) ? 'multiwoz22' : 'multiwoz21-convlab');
}

/** The files the ground truth is built from: the 2.1 ConvLab test file first, then 2.2's acts and dialogues. */
function groundTruthInputs(dataDir: string, source: GroundTruthSource): string[] {
  const files = [dataFile(dataDir, 'multiwoz', 'convlab_mwz21_test.json')];
  if (source === 'multiwoz22') {
    const dir = mwz22Dir(dataDir);
    files.push(path.join(dir, 'dialog_acts.json'), ...mwz22DialogueFiles(dir));
  }
  return files;
}

/**
 * The evaluation data as a signature names it: the ground truth's source and the content digest of
 * every data-dir file the evaluation reads (the files the ground truth is built from, the venue
 * database, the booked domains), so that runs on the same bytes compare from any folder and runs on
 * changed bytes do not. Not to the byte for the ground truth's inputs: a run that finds its cache
 * takes their digests from it, keyed by each file's size and mtime as the ground truth is, so an
 * edit that keeps both keeps the old digest (and the old ground truth) until the file's mtime
 * changes or the cache is deleted; --rebuild-ground-truth reads the bytes for its own run.
 */
export function groundTruthLabel(dataDir: string, source: GroundTruthSource): string {
  return `${source}@${inputsContentDigest(groundTruthLabelInputs(dataDir, source))}`;
}

/** What groundTruthLabel names by content: the ground truth's inputs, the venue database folder and the booked domains. */
export function groundTruthLabelInputs(dataDir: string, source: GroundTruthSource): string[] {
  const files = groundTruthInputs(dataDir, source);
  for (const extra of [dataFile(dataDir, 'multiwoz', 'db'), dataFile(dataDir, 'multiwoz', 'booked_domains.json')]) {
    if (existsSync(extra)) files.push(extra);
  }
  return files;
}

/** A cache file of this builder and these inputs, parsed; null for a missing, torn, foreign or stale one (rebuilt). */
function readCache<T extends { builderVersion: number; inputsDigest: string }>(file: string, digest: string, valid: (doc: T) => boolean = () => true): T | null {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as T;
    return doc.builderVersion === GROUND_TRUTH_BUILDER_VERSION && doc.inputsDigest === digest && valid(doc) ? doc : null;
  } catch {
    return null;
  }
}

/**
 * Whether a parsed scored file has a digest string per input and, for every dialogue, a text and a
 * token string per reference: a damaged file (`"sng0001": {}`, a turn short) is rebuilt, where
 * scoring with it would fail on a missing turn or take another turn's reference.
 */
function scoredFits(doc: ScoredFile, inputs: number, dialogues: Record<string, BuiltDialogue>): boolean {
  if (!strings(doc.inputsContent, inputs) || typeof doc.scored !== 'object' || doc.scored === null) return false;
  return Object.entries(dialogues).every(([id, d]) => {
    const s: Partial<ScoredReferences> | null | undefined = doc.scored[id];
    return strings(s?.text, d.references.length) && strings(s?.tokens13a, d.references.length);
  });
}

const strings = (v: unknown, n: number): boolean => Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'string');

/**
 * Written atomically (parallel runs never read half a file) through a temporary name of its own in
 * each writer (threads share a pid), removed when the write fails; an unwritable cache only costs
 * rebuild time.
 */
function writeCache(file: string, doc: unknown): boolean {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileAtomic(file, JSON.stringify(doc));
    return true;
  } catch {
    return false;
  }
}

/** The dialogues as the sources give them, read through `read`. */
function buildDialogues(dataDir: string, source: GroundTruthSource, convlab: string, read: FileRead): Record<string, BuiltDialogue> {
  const fromConvlab = buildFromConvlab(convlab, read);
  if (source !== 'multiwoz22') return fromConvlab;
  const goals = Object.fromEntries(Object.entries(fromConvlab).map(([k, v]) => [k, v.goal]));
  return buildFromMwz22(dataDir, goals, read);
}

/** Build (or read from cache) the ground truth for the test set. */
export function loadGroundTruth(dataDir: string, opts: LoadGroundTruthOptions = {}): GroundTruth & { cacheFile?: string } {
  const source = resolveSource(dataDir, opts.source);
  const inputs = groundTruthInputs(dataDir, source);
  const digest = inputsDigest(inputs);
  const cacheFile = path.join(groundTruthCacheDir(dataDir), `mwz-ground-truth-${source}-v${GROUND_TRUTH_BUILDER_VERSION}-${digest}.json`);
  const code = scoredReferencesCode();
  // No digest of the scoring code (bundled elsewhere): its part is derived in every run, never cached.
  const scoredFile = code === null || opts.noCache ? undefined : cacheFile.replace(/\.json$/, `.scored-${code}.json`);
  const load = (): GroundTruth & { cacheFile?: string } => {
    // Each input's content digest, of the bytes parsed (kept for the runs that find the cache).
    const content = new Map<string, string>();
    const read: FileRead = (file) => {
      const bytes = (opts.read ?? readFileSync)(file);
      content.set(path.resolve(file), bytesDigest(bytes));
      return bytes;
    };
    let base = opts.noCache ? null : readCache<GroundTruthFile>(cacheFile, digest);
    // The scored file is read only beside a base that came from the cache: a base rebuilt now (its
    // cache deleted, or an input changed keeping its size and mtime) may not be the one the file
    // was derived from, and the file's input digests would name the bytes of that older one.
    const baseCached = base !== null;
    // The cache file's name is reported (details.ground_truth_cache) unless writing it failed.
    let named = true;
    if (!base) {
      base = { source, builderVersion: GROUND_TRUTH_BUILDER_VERSION, inputsDigest: digest, dialogues: buildDialogues(dataDir, source, inputs[0], read) };
      if (!opts.noCache) named = writeCache(cacheFile, base);
    }
    const built = base.dialogues;
    const ids = Object.keys(built);
    let scored = scoredFile && baseCached ? readCache<ScoredFile>(scoredFile, digest, (d) => d.code === code && scoredFits(d, inputs.length, built)) : null;
    if (!scored) {
      scored = {
        builderVersion: GROUND_TRUTH_BUILDER_VERSION,
        inputsDigest: digest,
        code: code ?? '',
        inputsContent: inputs.map((f) => content.get(path.resolve(f)) ?? bytesDigest(readFileSync(f))),
        scored: Object.fromEntries(ids.map((id) => [id, scoredReferences(base.dialogues[id].references)])),
      };
      if (scoredFile) writeCache(scoredFile, scored);
    }
    const dialogues: Record<string, GroundTruthDialogue> = {};
    for (const id of ids) dialogues[id] = { ...base.dialogues[id], scored: scored.scored[id] };
    const gt: GroundTruth = { ...base, inputsContent: scored.inputsContent, dialogues };
    return named ? { ...gt, cacheFile } : gt;
  };
  // While holdMwzData is on (stdio), what the two cache files hold is kept while they keep their stamps.
  const gt = holdingMwzData() && scoredFile ? heldGroundTruth.get(`${cacheFile}\n${scoredFile}`, filesStamp([cacheFile, scoredFile]), () => deepFreeze(load())) : load();
  // Checked against the files' sizes and mtimes: their digests stand for the signature too.
  inputs.forEach((f, i) => rememberContentDigest(f, gt.inputsContent[i]));
  return gt;
}

/** Booked-domain files read while holdMwzData is on, by path (see held-data.ts). */
const heldBooked = new StampedCache<Record<string, string[][]>>();

/** mwzeval's booked_domains.json: per dialogue and system turn, domains booked so far. */
export function loadBookedDomains(dataDir: string, read?: FileRead): Record<string, string[][]> {
  const file = path.resolve(dataFile(dataDir, 'multiwoz', 'booked_domains.json'));
  if (!holdingMwzData()) return readJsonFile<Record<string, string[][]>>(file, read);
  return heldBooked.get(file, filesStamp([file]), () => deepFreeze(readJsonFile<Record<string, string[][]>>(file, read)));
}

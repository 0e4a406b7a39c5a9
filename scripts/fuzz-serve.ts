// Fuzz the JSON endpoints of `todeval serve` on loopback: a few thousand generated bodies (seeded,
// bounded), expecting zero 5xx and a live server at the end. Uses the tiny random test model.
// npm run fuzz:serve [-- --bodies 3000 --seed 1 --data-dir DIR]   (data: --data-dir, else $TODEVAL_DATA, else ./data)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { getSensitiveTinyModelDir } from '../test/nli-fixtures.js';
import { resolveDataDir } from '../src/data/data-dir.js';
import { fuzzRequests, runFuzz } from './lib/serve-fuzz.js';
import { spawnServe } from './lib/serve-process.js';

const { values } = parseArgs({ options: { bodies: { type: 'string', default: '3000' }, seed: { type: 'string', default: '1' }, 'data-dir': { type: 'string' } } });
const count = Number(values.bodies);
const dataDir = resolveDataDir(values['data-dir']).dir;
const dialogues = path.join(dataDir, 'sgd', 'test', 'dialogues_017.json');
const firstTurn = (JSON.parse(readFileSync(dialogues, 'utf8')) as { dialogue_id: string }[])[0].dialogue_id + '/1';
const token = 'fuzz-token-0123456789abcdef';
const maxItems = 8;

const server = await spawnServe(
  ['--model', getSensitiveTinyModelDir(), '--device', 'cpu', '--data-dir', dataDir, '--dialogues', dialogues, '--max-items', String(maxItems), '--log-level', 'warn'],
  { TODEVAL_TOKEN: token },
);
let failed = false;
try {
  const requests = fuzzRequests(count, { seed: Number(values.seed), datasetId: firstTurn, maxItems });
  const started = Date.now();
  const tally = await runFuzz(server.url, requests, { token, concurrency: 8 });
  const health = await fetch(`${server.url}/healthz`).then((r) => r.status, () => 0);
  console.log(`fuzz: ${count} bodies in ${((Date.now() - started) / 1000).toFixed(1)} s, statuses ${JSON.stringify(tally.byStatus)}`);
  console.log(`fuzz: 5xx or unanswered: ${tally.failures.length}; /healthz afterwards: ${health}`);
  for (const f of tally.failures.slice(0, 10)) console.log(`  ${f.status} ${f.request.route} (${f.request.how}): ${f.body}`);
  failed = tally.failures.length > 0 || health !== 200;
} finally {
  const code = await server.stop();
  console.log(`fuzz: server exited with ${code} after SIGTERM`);
  if (code !== 0) failed = true;
  if (server.stderr().includes('internal error')) failed = true;
}
process.exit(failed ? 1 : 0);

// `npm run build:validators`: writes src/util/schema-validators.generated.ts from schemas/ (run it
// after editing a schema; test/unit/schema-validators.test.ts fails until it is).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemaValidatorsCode } from './lib/schema-validators-code.js';

const out = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'util', 'schema-validators.generated.ts');
writeFileSync(out, schemaValidatorsCode());
process.stdout.write(`wrote ${out}\n`);

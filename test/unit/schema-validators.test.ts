import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRECOMPILED_SCHEMAS, schemaValidatorsCode } from '../../scripts/lib/schema-validators-code.js';
import { schemaValidator } from '../../src/util/json-schema.js';
import { REPO_ROOT } from '../helpers/shared.js';

describe('precompiled schema validators (src/util/schema-validators.generated.ts)', () => {
  it('are the standalone code of the schemas as they are now (else: npm run build:validators)', () => {
    const committed = readFileSync(path.join(REPO_ROOT, 'src', 'util', 'schema-validators.generated.ts'), 'utf8');
    expect(committed === schemaValidatorsCode(), 'schema-validators.generated.ts is stale: run `npm run build:validators`').toBe(true);
  });

  it('answer as the run-time compile answers, first error included, for every precompiled schema', () => {
    const wrong: unknown[] = [null, 7, 'x', [], {}, { act: 5 }, { act: 'INFORM', values: [1] }, { service_name: 1, slots: [] }, { service_name: 's', slots: [{}] }, { response: ['a'] }, { response: 'r', state: { hotel: { stars: 4 } } }, { signature: {}, items: [{}] }];
    for (const [file, definition] of PRECOMPILED_SCHEMAS) {
      const precompiled = schemaValidator(file, definition);
      // The same file by another name is not precompiled: Ajv compiles it at run time, as before.
      const compiled = schemaValidator(`./${file}`, definition);
      expect(compiled).not.toBe(precompiled);
      for (const value of wrong) {
        const what = `${file}#${definition ?? ''} ${JSON.stringify(value)}`;
        expect(precompiled(value), what).toBe(compiled(value));
        expect(precompiled.errors?.[0] ?? null, what).toEqual(compiled.errors?.[0] ?? null);
      }
    }
  });
});

import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ErrorObject } from 'ajv';
import { readPackageJson } from './package-file.js';
import { PRECOMPILED } from './schema-validators.generated.js';

/** A schema's check: Ajv's compiled function, or its standalone code (the same function, without the schema attached). */
export type SchemaCheck = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const compiled = new Map<string, SchemaCheck>();

/**
 * Ajv, loaded at the first schema not precompiled: loading it and compiling a schema cost a command
 * about a tenth of a CPU-second at each start (more than half of `todeval refs`'s), so the schemas
 * every start checks come precompiled (schema-validators.generated.ts, `npm run build:validators`).
 */
function ajvClass(): typeof AjvClass {
  return (createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvClass }).Ajv;
}

/**
 * A validator for one of the package's JSON Schemas (schemas/<file>), or for one of its
 * definitions (`definition`: the name under #/definitions): precompiled, or compiled once.
 */
export function schemaValidator(file: string, definition?: string): SchemaCheck {
  const key = `${file}#${definition ?? ''}`;
  let v = compiled.get(key) ?? (PRECOMPILED as Record<string, SchemaCheck | undefined>)[key];
  if (!v) {
    const schema = readPackageJson<Record<string, unknown>>('schemas', file);
    const Ajv = ajvClass();
    const ajv = new Ajv({ allErrors: false, strict: false });
    ajv.addSchema(schema);
    const id = schema.$id as string;
    v = ajv.getSchema(definition ? `${id}#/definitions/${definition}` : id)!;
  }
  compiled.set(key, v);
  return v;
}

/**
 * Why `value` breaks the schema, in the one-line form of our errors (`state.hotel.stars must be
 * string (schemas/<file>)`, the path relative to `value`), or undefined when it conforms.
 */
export function schemaError(value: unknown, file: string, definition?: string): string | undefined {
  const v = schemaValidator(file, definition);
  if (v(value)) return undefined;
  const e = v.errors?.[0];
  const at = e?.instancePath ? `${e.instancePath.slice(1).replaceAll('/', '.')} ` : '';
  return `${at}${e?.message ?? 'is invalid'} (schemas/${file})`;
}

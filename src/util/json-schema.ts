import { Ajv, type ValidateFunction } from 'ajv';
import { readPackageJson } from './package-file.js';

const compiled = new Map<string, ValidateFunction>();

/**
 * A validator for one of the package's JSON Schemas (schemas/<file>), or for one of its
 * definitions (`definition`: the name under #/definitions), compiled once.
 */
export function schemaValidator(file: string, definition?: string): ValidateFunction {
  const key = `${file}#${definition ?? ''}`;
  let v = compiled.get(key);
  if (!v) {
    const schema = readPackageJson<Record<string, unknown>>('schemas', file);
    const ajv = new Ajv({ allErrors: false, strict: false });
    ajv.addSchema(schema);
    const id = schema.$id as string;
    v = ajv.getSchema(definition ? `${id}#/definitions/${definition}` : id)!;
    compiled.set(key, v);
  }
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

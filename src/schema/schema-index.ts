import { InputError } from '../util/errors.js';
import { readJsonFile, type FileRead } from '../util/json-file.js';
import { schemaError } from '../util/json-schema.js';
import type { RawSchemaService, SchemaIntent, SchemaService, SchemaSlot } from './types.js';

/**
 * Lookup of services, slots and intents by name. Lookups return undefined for unknown names so
 * callers decide whether that is an input error (with the file and turn they know about).
 */
export class SchemaIndex {
  private readonly services = new Map<string, SchemaService>();
  private readonly slots = new Map<string, Map<string, SchemaSlot>>();
  private readonly intents = new Map<string, Map<string, SchemaIntent>>();

  /** `source` names the schema file(s) for error messages and signatures. */
  constructor(services: SchemaService[], readonly source: string) {
    for (const s of services) this.add(s);
  }

  add(s: SchemaService): void {
    this.services.set(s.name, s);
    this.slots.set(s.name, new Map(s.slots.map((x) => [x.name, x])));
    this.intents.set(s.name, new Map(s.intents.map((x) => [x.name, x])));
  }

  service(name: string): SchemaService | undefined {
    return this.services.get(name);
  }

  slot(service: string, slotName: string): SchemaSlot | undefined {
    return this.slots.get(service)?.get(slotName);
  }

  intent(service: string, intentName: string): SchemaIntent | undefined {
    return this.intents.get(service)?.get(intentName);
  }

  serviceNames(): string[] {
    return [...this.services.keys()];
  }

  allServices(): SchemaService[] {
    return [...this.services.values()];
  }
}

/**
 * Validate the common SGD / MultiWOZ 2.2 schema shape and normalise it. A file of another shape
 * (a dialogues file given as schema, a ConvLab dict) is reported as a wrong schema version.
 */
export function parseSchema(raw: unknown, file: string): SchemaService[] {
  if (!Array.isArray(raw)) {
    throw new InputError(
      'unsupported schema format: expected a JSON array of services with service_name/slots/intents (SGD or MultiWOZ 2.2 schema)',
      { file },
    );
  }
  return raw.map((r, i) => {
    const s = r as Partial<RawSchemaService>;
    const where = `service #${i}`;
    if (!s || typeof s !== 'object' || typeof s.service_name !== 'string' || !Array.isArray(s.slots)) {
      throw new InputError(
        'unsupported schema format: each service needs service_name and slots (is this a dialogues file?)',
        { file, where },
      );
    }
    // The fields read below, typed (schemas/sgd-schema.schema.json): a number where a string
    // belongs would otherwise be coerced, an object dropped, without a word.
    const typeError = schemaError(s, 'sgd-schema.schema.json', 'service');
    if (typeError) throw new InputError(typeError, { file, where: s.service_name });
    const slots: SchemaSlot[] = s.slots.map((sl) => ({
      name: sl.name,
      description: sl.description ?? '',
      isCategorical: sl.is_categorical === true,
      possibleValues: sl.possible_values ?? [],
    }));
    const intents: SchemaIntent[] = (s.intents ?? []).map((it) => ({
      name: it.name,
      description: it.description ?? '',
    }));
    return { name: s.service_name, description: s.description ?? '', slots, intents };
  });
}

export function loadSchemaFile(file: string, read?: FileRead): SchemaIndex {
  return new SchemaIndex(parseSchema(readJsonFile(file, read), file), file);
}

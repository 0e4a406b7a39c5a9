import { dataFile } from '../data/data-dir.js';
import { loadSchemaFile, SchemaIndex } from './schema-index.js';

/** `<data>/multiwoz/schema.json`: the MultiWOZ 2.2 schema (service-slot names such as restaurant-food). */
export function loadMultiwozSchema(dataDir: string): SchemaIndex {
  return loadSchemaFile(dataFile(dataDir, 'multiwoz', 'schema.json'));
}

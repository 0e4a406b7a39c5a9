/** One slot of a service schema, normalised across SGD and MultiWOZ 2.2. */
export interface SchemaSlot {
  name: string;
  description: string;
  isCategorical: boolean;
  possibleValues: string[];
}

export interface SchemaIntent {
  name: string;
  description: string;
}

export interface SchemaService {
  name: string;
  description: string;
  slots: SchemaSlot[];
  intents: SchemaIntent[];
}

/** The raw shape shared by SGD schema.json, SGD-X *_schema.json and MultiWOZ 2.2 schema.json. */
export interface RawSchemaService {
  service_name: string;
  description?: string;
  slots: { name: string; description?: string; is_categorical?: boolean; possible_values?: string[] | null }[];
  intents?: { name: string; description?: string }[];
}

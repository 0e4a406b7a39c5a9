import type { Turn } from '../adapters/types.js';
import { InputError } from '../util/errors.js';
import { dataFile } from '../data/data-dir.js';
import { loadSchemaFile, SchemaIndex } from './schema-index.js';
import type { SgdxVariant } from './sgd.js';

/**
 * SGD-X rewrites every service, slot and intent name but keeps the order of services, slots and
 * intents of the original schema; the renaming is therefore recovered by position.
 */
export interface SgdxRenaming {
  services: Map<string, string>;
  slots: Map<string, Map<string, string>>;
  intents: Map<string, Map<string, string>>;
}

export function sgdxRenaming(original: SchemaIndex, variant: SchemaIndex): SgdxRenaming {
  const a = original.allServices();
  const b = variant.allServices();
  if (a.length !== b.length) {
    throw new InputError(`SGD-X schema has ${b.length} services, the original ${a.length}`, { file: variant.source });
  }
  const out: SgdxRenaming = { services: new Map(), slots: new Map(), intents: new Map() };
  a.forEach((s, i) => {
    const v = b[i];
    if (s.slots.length !== v.slots.length || s.intents.length !== v.intents.length) {
      throw new InputError(`SGD-X service ${v.name} does not align with ${s.name}`, { file: variant.source });
    }
    out.services.set(s.name, v.name);
    out.slots.set(s.name, new Map(s.slots.map((x, j) => [x.name, v.slots[j].name])));
    out.intents.set(s.name, new Map(s.intents.map((x, j) => [x.name, v.intents[j].name])));
  });
  return out;
}

export function loadSgdxSchema(dataDir: string, variant: SgdxVariant, split = 'test'): SchemaIndex {
  return loadSchemaFile(dataFile(dataDir, 'sgd', 'sgd_x', variant, `${split}_schema.json`));
}

/** The same turns with service, slot and intent names of an SGD-X variant (values untouched). */
export function renameTurnsForSgdx(turns: Turn[], renaming: SgdxRenaming): Turn[] {
  return turns.map((t) => ({
    ...t,
    services: t.services.map((s) => renaming.services.get(s) ?? s),
    actions: t.actions.map((a) => {
      const slots = renaming.slots.get(a.service);
      const intents = renaming.intents.get(a.service);
      const isIntentValue = a.slot === 'intent';
      return {
        ...a,
        service: renaming.services.get(a.service) ?? a.service,
        slot: slots?.get(a.slot) ?? a.slot,
        values: isIntentValue ? a.values.map((v) => intents?.get(v) ?? v) : a.values,
        intent: a.intent !== undefined ? (intents?.get(a.intent) ?? a.intent) : undefined,
      };
    }),
  }));
}

import { dataFile } from '../data/data-dir.js';
import { readJsonFile } from '../util/json-file.js';
import { parseSchema } from './schema-index.js';

/** SGD domain: the service name before `_N` (Restaurants_2 -> Restaurants). */
export function sgdDomain(service: string): string {
  const m = /^(.*?)_\d+$/.exec(service);
  return m ? m[1] : service;
}

/** Services of the SGD train schema; a test service is unseen when its domain is absent here. */
export function sgdTrainServices(dataDir: string): string[] {
  const file = dataFile(dataDir, 'sgd', 'train', 'schema.json');
  return parseSchema(readJsonFile(file), file).map((s) => s.name);
}

/** Domains of the SGD train schema. */
export function sgdTrainDomains(dataDir: string): Set<string> {
  return new Set(sgdTrainServices(dataDir).map(sgdDomain));
}

/** True when the service's domain never occurs in training (Alarm, Messaging, Payment, Trains on test). */
export function isUnseenSgdService(service: string, trainDomains: Set<string>): boolean {
  return !trainDomains.has(sgdDomain(service));
}

export const SGDX_VARIANTS = ['v1', 'v2', 'v3', 'v4', 'v5'] as const;
export type SgdxVariant = (typeof SGDX_VARIANTS)[number];

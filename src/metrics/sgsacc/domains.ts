import { isUnseenSgdService, sgdDomain } from '../../schema/sgd.js';

/**
 * Seen/unseen split: a service is unseen when its domain (SGD convention, Restaurants_2 ->
 * Restaurants) is absent from the training schema. With no training services known (MultiWOZ,
 * generic data) everything counts as seen.
 */
export function makeUnseenTest(trainServices: Iterable<string> | undefined): (service: string) => boolean {
  if (!trainServices) return () => false;
  const domains = new Set([...trainServices].map(sgdDomain));
  if (domains.size === 0) return () => false;
  return (service) => isUnseenSgdService(service, domains);
}

/** SGD convention: the domain is the service name before its `_N` suffix (Restaurants_2 -> Restaurants). */
export function domainOf(service: string): string {
  return service.replace(/_\d+$/, '');
}

/**
 * Seen/unseen split: a service is unseen when its domain is absent from the training schema. With
 * no training domains known (MultiWOZ, generic data) everything counts as seen.
 */
export function makeUnseenTest(trainServices: Iterable<string> | undefined): (service: string) => boolean {
  if (!trainServices) return () => false;
  const domains = new Set([...trainServices].map(domainOf));
  if (domains.size === 0) return () => false;
  return (service) => !domains.has(domainOf(service));
}

/**
 * Items of several parts (shards) back in the order of the unsharded run: `at[i]` is where the
 * part's `items[i]` stands in that run. The sort is stable, so items at the same position keep
 * the parts' order.
 */
export function inRunOrder<T>(parts: readonly { items: readonly T[]; at: readonly number[] }[]): T[] {
  return parts
    .flatMap(({ items, at }) => items.map((item, i) => ({ item, at: at[i] })))
    .sort((a, b) => a.at - b.at)
    .map((x) => x.item);
}

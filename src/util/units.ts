/** Byte counts as people read them in download lines and listings: `12.3 MiB`. */
export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

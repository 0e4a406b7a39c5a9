/**
 * A shard run by `--workers` reports its progress to the parent over the IPC channel instead of
 * drawing a bar (its stderr is a pipe): the parent shows one bar for all shards. Outside a worker
 * this does nothing.
 */
export function reportToParent(done: number, total: number): void {
  if (process.env.TODEVAL_WORKER === '1' && process.send && process.connected) process.send({ type: 'progress', done, total });
}

/** Called once by a worker: a parent that goes away (killed, Ctrl-C) stops its shards too. */
export function exitWithParent(): void {
  if (process.env.TODEVAL_WORKER !== '1' || !process.send) return;
  process.once('disconnect', () => process.exit(143));
  // The channel must not keep a finished shard alive: the parent waits for its exit.
  process.channel?.unref();
}

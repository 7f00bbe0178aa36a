/** How many session files the index reads at once (open files stay bounded). */
export const IO_CONCURRENCY = 32;

/** Runs `task` over `items`, at most `limit` at a time (open files stay bounded). */
export async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await task(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** `map` with at most `limit` tasks at a time, results in order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  await eachLimited(items, limit, async (item, i) => {
    out[i] = await task(item);
  });
  return out;
}

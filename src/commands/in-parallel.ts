/** Nodes of a target acted on at once when the request does not say (`--parallel`, `parallel`). */
export const DEFAULT_PARALLEL = 10;

/**
 * Runs `work` on each item, at most `limit` at once, and answers the results in the items'
 * order. A rejection of one does not stop the others from being begun or awaited; the
 * first is thrown once every item has ended, so nothing is left running unawaited.
 */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker);
  await Promise.all(workers);
  if (failure) throw failure.error;
  return results;
}

/**
 * A loader that loads once: a lazily imported module's `import()` is made once a process,
 * for each call of `import()` resolves the module again (through a loader's hooks, where
 * one runs, as under tsx).
 */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load();
    return loading;
  };
}

/**
 * What is made once, on first use, and not before: a lazily imported module's `import()`
 * (each call of `import()` resolves the module again, through a loader's hooks where one
 * runs, as under tsx), or a node's fingerprint key, opened only when something is
 * fingerprinted.
 */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load();
    return loading;
  };
}

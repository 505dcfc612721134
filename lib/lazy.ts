/**
 * A module loaded on its first use, once: libraries only some requests or tasks need (spreadsheets,
 * LLM clients) stay out of every process's start-up memory. A failed load is tried again next time.
 */
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}

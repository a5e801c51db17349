// `--db container`: a throwaway PostgreSQL in a container via @testcontainers/postgresql (needs Docker or Podman).
import { ProviderError } from './types.ts';
import type { DbProvider } from './types.ts';

/** testcontainers' error when no runtime is found; the wording has changed before, so it lives in one place. */
export const NO_RUNTIME = 'Could not find a working container runtime strategy';
/** The official image by default; CONFORMANCE_DB_IMAGE names another (e.g. the local drop-in scripts/container-images.sh builds). */
export const POSTGRES_IMAGE = 'postgres:16-alpine';

export async function startContainer(env: NodeJS.ProcessEnv): Promise<DbProvider> {
  let PostgreSqlContainer;
  try {
    ({ PostgreSqlContainer } = await import('@testcontainers/postgresql'));
  } catch (e) {
    // The npm package of the harness leaves the container packages to the user (optional peer dependencies).
    if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && /testcontainers/.test((e as Error).message)) {
      throw new ProviderError('--db container needs the packages testcontainers and @testcontainers/postgresql: npm i -D testcontainers@^12.2.0 @testcontainers/postgresql@^12.2.0 (or use --db embedded or --db url)');
    }
    throw e;
  }
  const image = env.CONFORMANCE_DB_IMAGE || POSTGRES_IMAGE;
  let started;
  try {
    started = await new PostgreSqlContainer(image).start();
  } catch (e) {
    if (e instanceof Error && e.message.includes(NO_RUNTIME)) {
      throw new ProviderError(`--db container: no container runtime found (${NO_RUNTIME}); use --db embedded or --db url`);
    }
    throw e;
  }
  let stopped = false;
  return {
    kind: 'container',
    connectionString: started.getConnectionUri(),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await started.stop();
    },
  };
}

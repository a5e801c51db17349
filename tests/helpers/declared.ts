// A check the project's own tests run: declared in the one registry (harness/registry.ts) the first time a test of
// this worker asks for it, the same declaration after (the registry refuses a second one; a worker runs many tests).
import { declaration, defineCheck, identity } from '../../harness/registry.ts';
import type { CheckDef } from '../../harness/record.ts';

export function declared(id: string, title = `Rule of ${id}`, requirements: string[] = ['PUB-ERR-001']): CheckDef {
  const d = declaration(id) ?? defineCheck({ id, subject: 'service', requirements, title, probe: true });
  return identity(d);
}

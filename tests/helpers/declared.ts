// A check the project's own tests run: declared in the one registry (engine/registry.ts) the first time a test of
// this worker asks for it, the same declaration after (the registry refuses a second one; a worker runs many tests).
import { declaration, defineCheck, identity } from '../../engine/registry.ts';
import type { CheckDef } from '../../record/record.ts';

export function declared(id: string, title = `Rule of ${id}`, requirements: string[] = ['PUB-ERR-001']): CheckDef {
  const d = declaration(id) ?? defineCheck({ id, subject: 'service', requirements, title, probe: true });
  return identity(d);
}

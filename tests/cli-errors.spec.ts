// The CLI's one table of errors (cli/errors.ts): each known error ends a command with its code, one redacted
// line and its exit status; anything else is an internal error, exit 2, one line without a stack.
import { test, expect } from '@playwright/test';
import { CLI_ERRORS, ContainerSetupError, errorExit, SetupError, UsageError } from '../cli/errors.ts';
import { ProfileError } from '../profile/profile.ts';
import { registerSecret } from '../record/redact.ts';
import { WaiverError } from '../reports/context.ts';

test('every known error maps to its row: code, one line, exit 2; the rest is an internal error', () => {
  const cases: [Error, string][] = [
    [new UsageError('unknown option --x\nmore'), 'usage'],
    [new ContainerSetupError('no engine'), 'container'],
    [new SetupError('unreachable'), 'setup'],
    [new ProfileError('bad profile'), 'profile'],
    [new WaiverError('bad waivers'), 'waivers'],
  ];
  for (const [e, code] of cases) {
    const r = errorExit(e);
    expect(r.code).toBe(code);
    expect(r.exit).toBe(2);
    expect(r.line).toBe(`conformance: ${e.message.split('\n')[0]}`);
  }
  expect(CLI_ERRORS.map((r) => r.code).sort()).toEqual(cases.map(([, c]) => c).sort());
  const parse = Object.assign(new TypeError("Unknown option '--y'"), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
  expect(errorExit(parse).code).toBe('usage');
  const internal = errorExit(new RangeError('boom\n    at x (y.ts:1:1)'));
  expect(internal).toEqual({ code: 'internal', line: 'conformance: internal error: boom at x (y.ts:1:1)', exit: 2 });
  registerSecret('cek_live_errors_table_secret_77');
  expect(errorExit(new SetupError('key cek_live_errors_table_secret_77 refused')).line).not.toContain('cek_live_errors_table_secret_77');
});

// Mutants that the authentication suite (suites/authentication.spec.ts) must catch.
import type { Matrix } from '../matrix.ts';

export const MATRIX: Matrix = {
  'reason-revoked-as-invalid': ['auth-revoked-key-*'],
  'reason-expired-as-disabled': ['auth-expired-key-*'],
  'reason-missing-bearer-as-malformed': ['auth-missing-bearer-*'],
  'test-key-always-allowed': ['auth-test-prefix-not-allowed-*'],
  'category-401-wrong': ['auth-malformed-token-*', 'auth-invalid-key-*', 'auth-disabled-key-*', 'auth-api-keys-disabled-*'],
};

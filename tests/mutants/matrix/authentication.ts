// Mutants that the authentication suite (checks/service/authentication.ts) must catch. Every check of the
// suite is named by at least one mutant: each 401 reason by its own reason mutant or by the wrong 401
// category, digest_key_unavailable by the 500 mutant. The `basic-scheme` variant accepts
// malformed_token as informational (the spec leaves it open), so only the category mutant breaks it.
import type { Matrix } from '../matrix.ts';

export const MATRIX: Matrix = {
  'reason-revoked-as-invalid': ['auth-revoked-key-*'],
  'reason-expired-as-disabled': ['auth-expired-key-*'],
  'reason-missing-bearer-as-malformed': ['auth-missing-bearer-list', 'auth-missing-bearer-encounter', 'auth-missing-bearer-document', 'auth-missing-bearer-transcript', 'auth-missing-bearer-audio'],
  'test-key-always-allowed': ['auth-test-prefix-not-allowed-*'],
  'category-401-wrong': [
    'auth-missing-bearer-*', 'auth-api-keys-disabled-*', 'auth-test-prefix-not-allowed-*', 'auth-malformed-token-*',
    'auth-invalid-key-*', 'auth-disabled-key-*', 'auth-revoked-key-*', 'auth-expired-key-*',
  ],
  'digest-unavailable-as-500': ['auth-digest-key-unavailable-*'],
};

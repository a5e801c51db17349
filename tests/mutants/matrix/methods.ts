// Mutants that the GET-only / no-mutation suite (checks/service/contract.ts) must catch: a route that
// accepts another method fails the check of every route.
import type { Matrix } from '../matrix.ts';

export const MATRIX: Matrix = {
  'non-get-answers-204': ['contract-non-get-methods-change-nothing-*'],
  // Only the routes whose bodies carry updated_at show the touch (transcript and audio bodies have none).
  'non-get-touches-resource': ['contract-non-get-methods-change-nothing-list', 'contract-non-get-methods-change-nothing-encounter', 'contract-non-get-methods-change-nothing-document'],
};

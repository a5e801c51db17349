// Mutants that the order-of-evaluation suite (checks/service/order.ts) and property
// (checks/service/properties/evaluation-order.ts) must catch. Each precedence mutant moves one stage of §4 ahead of
// an earlier one; the suite's pair checks for exactly those two stages must fail, and so must the
// property (its fixed examples cover every pair, so this does not depend on the seed).
import type { Matrix } from '../matrix.ts';

const PROPERTY = 'order-property-earliest-faulty-stage-wins';

export const MATRIX: Matrix = {
  'precedence-route-before-auth': ['order-auth-before-route-*', PROPERTY],
  'precedence-scope-before-auth': ['order-auth-before-scope-*', PROPERTY],
  'precedence-query-before-auth': ['order-auth-before-keys-*', 'order-route-before-keys-*', PROPERTY],
  'precedence-validation-before-auth': ['order-auth-before-query-*', 'order-route-before-query-*', PROPERTY],
  'precedence-lookup-before-auth': ['order-auth-before-lookup-*', PROPERTY],
  'precedence-scope-before-route': ['order-route-before-scope-*', PROPERTY],
  'precedence-lookup-before-route': ['order-route-before-lookup-*', PROPERTY],
  'precedence-query-before-scope': ['order-scope-before-keys-*', 'order-scope-before-query-*', PROPERTY],
  'precedence-lookup-before-scope': ['order-scope-before-lookup-*', PROPERTY],
  'precedence-validation-before-keys': ['order-keys-before-query-*', PROPERTY],
  'precedence-lookup-before-query': ['order-keys-before-lookup-*', PROPERTY],
  'precedence-query-before-route': ['order-route-before-keys-*', PROPERTY],
  'precedence-validation-before-route': ['order-route-before-query-*', PROPERTY],
  'precedence-validation-before-scope': ['order-scope-before-query-*', PROPERTY],
  // Where the order is open, the answer must still be one of the documented errors.
  'multiple-query-errors-combined': ['order-open-*'],
  'field-limit-null': ['order-open-limit-and-offset-invalid-list', 'order-open-offset-and-limit-invalid-list'],
  'field-unsupported-filter-wrong': ['order-open-two-unsupported-keys-list', 'order-keys-before-query-*'],
  // The earlier stage's answer keeps its own status, category and field.
  'status-403-as-401': ['order-scope-before-*'],
  'category-403-wrong': ['order-route-before-*', 'order-scope-before-*'],
  'category-401-wrong': [
    'order-auth-before-keys-*', 'order-auth-before-query-*', 'order-auth-before-lookup-*',
    'order-auth-before-route-api-keys-disabled-*', 'order-auth-before-scope-api-keys-disabled-*',
  ],
  'digest-unavailable-as-500': ['order-auth-before-route-digest-key-unavailable-*', 'order-auth-before-scope-digest-key-unavailable-*'],
};

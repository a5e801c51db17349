// The shared assertions on fabricated exchanges: each good exchange passes, each departure throws a
// CheckFailure whose title names the violation.
import { test, expect } from '@playwright/test';
import { expectError, expectErrorOrOpen, expectSuccess, expectDocumented, expectJson, isJsonMediaType, describe as describeExchange, fail, CATEGORY_BY_STATUS, REASONS_BY_STATUS, STATUS_BY_REASON, reasonOf } from '../judge/assertions.ts';
import { CheckFailure, type Exchange } from '../record/record.ts';

const TS = '2025-03-04T05:06:07Z';
const LIST = '/external/v1/encounters?limit=0';

function exchange(status: number, body: unknown, opts: { contentType?: string; target?: string } = {}): Exchange {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    request: { method: 'GET', target: opts.target ?? LIST, headers: {} },
    response: { status, headers: { 'content-type': opts.contentType ?? 'application/json; charset=utf-8' }, body: text, bodyBytes: Buffer.byteLength(text), durationMs: 3 },
  };
}

function transportFailure(): Exchange {
  return { request: { method: 'GET', target: LIST, headers: {} }, error: { kind: 'timeout', message: 'no complete response within 300 ms' } };
}

function err(status: number, over: Record<string, unknown> = {}): Exchange {
  const defaults: Record<number, Record<string, unknown>> = {
    422: { error: 'api_key_validation_failed', reason_code: 'invalid_limit', message: 'limit must be between 1 and 100', field: 'limit' },
    401: { error: 'api_key_unauthorized', reason_code: 'revoked_key', message: 'API key revoked', field: null },
    403: { error: 'api_key_forbidden', reason_code: 'missing_scope', message: 'Missing scope', field: null },
    404: { error: 'not_found', reason_code: 'encounter_not_found', message: 'Not found', field: null },
    400: { error: 'public_api_bad_request', reason_code: 'unsupported_filter', message: 'Unsupported filter', field: 'patient_id' },
    503: { error: 'public_api_unavailable', reason_code: 'digest_key_unavailable', message: 'Unavailable', field: null },
  };
  return exchange(status, { ...defaults[status], ...over });
}

function failure(fn: () => unknown): CheckFailure {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CheckFailure);
    return e as CheckFailure;
  }
  throw new Error('expected a CheckFailure');
}

const summary = { encounter_id: 'e1', organization_id: 'o1', created_at: TS, updated_at: TS };
const listBody = { items: [summary], limit: 50, offset: 0, total: 1 };

test('the oracle tables agree with each other', () => {
  for (const [status, reasons] of Object.entries(REASONS_BY_STATUS)) {
    for (const r of reasons) expect(STATUS_BY_REASON[r]).toBe(Number(status));
    expect(Number(status) in CATEGORY_BY_STATUS).toBe(true);
  }
  expect(Object.keys(STATUS_BY_REASON)).toHaveLength(27);
  expect(CATEGORY_BY_STATUS[404]).toBeUndefined();
});

test.describe('expectError', () => {
  test('passes on a correct exchange and returns the body', () => {
    const body = expectError(err(422), { reason: 'invalid_limit', field: 'limit' });
    expect(body.reason_code).toBe('invalid_limit');
    expect(expectError(err(401), { reason: 'revoked_key' }).field).toBeNull(); // field defaults to null
    expect(expectError(err(403), { reason: 'missing_scope', field: null }).error).toBe('api_key_forbidden');
    expect(expectError(err(400), { reason: 'unsupported_filter', field: 'patient_id' }).field).toBe('patient_id');
    expect(expectError(err(503), { reason: 'digest_key_unavailable' }).error).toBe('public_api_unavailable');
  });

  test('wrong status', () => {
    const f = failure(() => expectError(err(400, { reason_code: 'invalid_limit' }), { reason: 'invalid_limit', field: 'limit' }));
    expect(f.title).toBe('Expected 422 invalid_limit');
    expect(f.detail).toBe(`got 400 "invalid_limit" for ${LIST}`);
  });

  test('a 200 where an error was expected', () => {
    const f = failure(() => expectError(exchange(200, listBody), { reason: 'invalid_limit', field: 'limit' }));
    expect(f.title).toBe('Expected 422 invalid_limit');
    expect(f.detail).toBe(`got 200 (a success: the request was accepted) for ${LIST}`);
  });

  test('wrong reason', () => {
    const f = failure(() => expectError(err(422, { reason_code: 'invalid_offset', field: 'offset' }), { reason: 'invalid_limit', field: 'limit' }));
    expect(f.title).toBe('Expected 422 invalid_limit');
    expect(f.detail).toContain('"invalid_offset"');
  });

  test('wrong category', () => {
    const f = failure(() => expectError(err(401, { error: 'unauthorized' }), { reason: 'revoked_key' }));
    expect(f.title).toBe('Wrong error category for 401');
    expect(f.detail).toBe('expected "api_key_unauthorized", got "unauthorized"');
  });

  test('wrong field (a value, and null where a field was expected)', () => {
    const f = failure(() => expectError(err(400, { field: 'limit' }), { reason: 'unsupported_filter', field: 'patient_id' }));
    expect(f.title).toBe('Wrong field for unsupported_filter');
    expect(f.detail).toBe('expected "patient_id", got "limit"');
    expect(failure(() => expectError(err(422, { field: null }), { reason: 'invalid_limit', field: 'limit' })).title).toBe('Wrong field for invalid_limit');
    expect(failure(() => expectError(err(401, { field: 'authorization' }), { reason: 'revoked_key' })).title).toBe('Wrong field for revoked_key');
  });

  test('extra property', () => {
    const f = failure(() => expectError(err(422, { details: { limit: 'bad' } }), { reason: 'invalid_limit', field: 'limit' }));
    expect(f.title).toBe('Error body does not match PublicApiErrorResponse');
    expect(f.detail).toContain("'details'");
  });

  test('missing property', () => {
    const e = err(401);
    const body = JSON.parse(e.response!.body);
    delete body.field;
    const f = failure(() => expectError(exchange(401, body), { reason: 'revoked_key' }));
    expect(f.title).toBe('Error body does not match PublicApiErrorResponse');
  });

  test('non-JSON body', () => {
    const f = failure(() => expectError(exchange(422, '<html>Bad Request</html>'), { reason: 'invalid_limit', field: 'limit' }));
    expect(f.title).toBe('Response body is not valid JSON');
    expect(f.detail).toMatch(/^status 422: /);
  });

  test('wrong content-type', () => {
    for (const ct of ['text/plain', 'text/json', 'application/jsonx', 'application/json-seq', 'application/+json', 'text/x+json', '']) {
      const f = failure(() => expectError(exchange(422, JSON.parse(err(422).response!.body), { contentType: ct }), { reason: 'invalid_limit', field: 'limit' }));
      expect(f.title).toBe('Response is not labelled application/json');
      expect(f.detail).toBe(`status 422, content-type ${JSON.stringify(ct)}`);
    }
  });

  test('application/json with parameters or another letter case, and any +json type, is accepted for errors', () => {
    for (const ct of ['application/json', 'application/json;charset=UTF-8', 'Application/JSON', 'application/problem+json', 'application/vnd.example.error+json; charset=utf-8', 'APPLICATION/VND.X+JSON']) {
      expect(() => expectError(exchange(422, JSON.parse(err(422).response!.body), { contentType: ct }), { reason: 'invalid_limit', field: 'limit' })).not.toThrow();
    }
  });

  test('transport error', () => {
    const f = failure(() => expectError(transportFailure(), { reason: 'invalid_limit', field: 'limit' }));
    expect(f.title).toBe('No response from target');
    expect(f.detail).toBe('timeout: no complete response within 300 ms');
  });

  test('the 404 category is not checked', () => {
    for (const category of ['not_found', 'public_api_not_found', 'anything']) {
      expect(() => expectError(err(404, { error: category }), { reason: 'encounter_not_found' })).not.toThrow();
    }
  });

  test('a body that is JSON but not an object', () => {
    expect(failure(() => expectError(exchange(422, 'null'), { reason: 'invalid_limit', field: 'limit' })).title).toBe('Expected 422 invalid_limit');
    expect(failure(() => expectError(exchange(422, '[1]'), { reason: 'invalid_limit', field: 'limit' })).title).toBe('Expected 422 invalid_limit');
  });

  test('an unknown expected reason is a harness error, not a CheckFailure', () => {
    let e: unknown;
    try {
      expectError(err(422), { reason: 'no_such_reason' });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(CheckFailure);
    expect((e as Error).message).toBe('unknown reason no_such_reason');
  });
});

test.describe('expectSuccess', () => {
  test('passes on a valid 200 and returns the body', () => {
    expect(expectSuccess(exchange(200, listBody), 'listPublicEncounters')).toEqual(listBody);
    const doc = { document: { document_id: 'd', encounter_id: 'e', schema_type: 'ambient_transcript', created_at: TS, updated_at: TS } };
    expect(expectSuccess(exchange(200, doc), 'getPublicEncounterDocument')).toEqual(doc);
  });

  test('wrong status', () => {
    const f = failure(() => expectSuccess(exchange(201, listBody), 'listPublicEncounters'));
    expect(f.title).toBe('Expected 200');
    expect(f.detail).toMatch(/^got 201: /);
    expect(failure(() => expectSuccess(err(422), 'listPublicEncounters')).title).toBe('Expected 200');
  });

  test('a body that does not match the success schema (extra property, missing total)', () => {
    const f = failure(() => expectSuccess(exchange(200, { ...listBody, items: [{ ...summary, internal: 1 }] }), 'listPublicEncounters'));
    expect(f.title).toBe('Response does not match PublicEncounterListResponse');
    expect(f.detail).toBe("/items/0 must NOT have additional properties 'internal'");
    const { total: _total, ...noTotal } = listBody;
    expect(failure(() => expectSuccess(exchange(200, noTotal), 'listPublicEncounters')).title).toBe('Response does not match PublicEncounterListResponse');
  });

  test('the body of another operation is rejected', () => {
    expect(failure(() => expectSuccess(exchange(200, listBody), 'getPublicEncounter')).title).toBe('Response does not match PublicEncounterDetailResponse');
  });

  test('a 200 is application/json (with parameters), never another JSON type', () => {
    expect(() => expectSuccess(exchange(200, listBody, { contentType: 'application/json; charset=utf-8' }), 'listPublicEncounters')).not.toThrow();
    const f = failure(() => expectSuccess(exchange(200, listBody, { contentType: 'application/vnd.example+json' }), 'listPublicEncounters'));
    expect(f.title).toBe('Success response is not application/json');
  });

  test('non-JSON body, wrong content-type, transport error', () => {
    expect(failure(() => expectSuccess(exchange(200, '{"items":'), 'listPublicEncounters')).title).toBe('Response body is not valid JSON');
    expect(failure(() => expectSuccess(exchange(200, listBody, { contentType: 'text/plain' }), 'listPublicEncounters')).title).toBe('Response is not labelled application/json');
    expect(failure(() => expectSuccess(transportFailure(), 'listPublicEncounters')).title).toBe('No response from target');
  });
});

test.describe('expectDocumented', () => {
  test('passes on a documented success and a documented error', () => {
    expect(expectDocumented(exchange(200, listBody), 'listPublicEncounters')).toEqual(listBody);
    expect(expectDocumented(err(422), 'listPublicEncounters')).toMatchObject({ reason_code: 'invalid_limit' });
    expect(expectDocumented(err(404), 'getPublicEncounter')).toMatchObject({ reason_code: 'encounter_not_found' });
  });

  test('undocumented status code', () => {
    const f = failure(() => expectDocumented(exchange(418, { error: 'teapot' }), 'listPublicEncounters'));
    expect(f.title).toBe('Undocumented status code');
    expect(f.detail).toBe('418 is not listed for listPublicEncounters');
    expect(failure(() => expectDocumented(err(404), 'listPublicEncounters')).title).toBe('Undocumented status code');
    expect(failure(() => expectDocumented(err(422), 'getPublicEncounter')).title).toBe('Undocumented status code');
    expect(failure(() => expectDocumented(exchange(500, { error: 'x' }), 'getPublicEncounter')).title).toBe('Undocumented status code');
  });

  test('a body that does not match the schema of the status', () => {
    const f = failure(() => expectDocumented(err(503, { retry_after: 5 }), 'listPublicEncounters'));
    expect(f.title).toBe('Response does not match PublicApiErrorResponse');
    expect(failure(() => expectDocumented(exchange(200, { items: [] }), 'listPublicEncounters')).title).toBe('Response does not match PublicEncounterListResponse');
  });

  test('a reason code under the wrong status', () => {
    const f = failure(() => expectDocumented(err(422, { reason_code: 'missing_scope' }), 'listPublicEncounters'));
    expect(f.title).toBe('Reason code under the wrong status');
    expect(f.detail).toBe('missing_scope under 422');
  });

  test('non-JSON body, wrong content-type, transport error', () => {
    expect(failure(() => expectDocumented(exchange(422, 'oops'), 'listPublicEncounters')).title).toBe('Response body is not valid JSON');
    expect(failure(() => expectDocumented(exchange(422, JSON.parse(err(422).response!.body), { contentType: 'text/html' }), 'listPublicEncounters')).title).toBe('Response is not labelled application/json');
    expect(failure(() => expectDocumented(transportFailure(), 'listPublicEncounters')).title).toBe('No response from target');
  });
});

test.describe('expectErrorOrOpen', () => {
  const open = { reasons: ['audio_not_available_for_document'], requirement: 'AUDIO-NOT-FOUND-VS-NOT-AVAILABLE' };
  const audio404 = exchange(404, { error: 'x', reason_code: 'audio_not_found', message: 'm', field: null });
  const audio400 = exchange(400, { error: 'public_api_bad_request', reason_code: 'audio_not_available_for_document', message: 'm', field: null });

  test('the closest reading passes without an observation', () => {
    const seen: string[] = [];
    expect(expectErrorOrOpen(audio404, { reason: 'audio_not_found', field: null }, open, (t) => seen.push(t)).reason_code).toBe('audio_not_found');
    expect(seen).toEqual([]);
  });

  test('an open reason is judged in full, then recorded', () => {
    const seen: string[] = [];
    expectErrorOrOpen(audio400, { reason: 'audio_not_found', field: null }, open, (t) => seen.push(t));
    expect(seen).toEqual(['answered 400 audio_not_available_for_document where audio_not_found is the closest reading (AUDIO-NOT-FOUND-VS-NOT-AVAILABLE leaves it open)']);
    // The open reason under a wrong category, or with a field, still fails.
    const badCategory = exchange(400, { error: 'bad_request', reason_code: 'audio_not_available_for_document', message: 'm', field: null });
    expect(failure(() => expectErrorOrOpen(badCategory, { reason: 'audio_not_found', field: null }, open, () => {})).title).toBe('Wrong error category for 400');
  });

  test('a reason that is neither fails as expectError does', () => {
    const other = exchange(404, { error: 'x', reason_code: 'document_not_found', message: 'm', field: null });
    expect(failure(() => expectErrorOrOpen(other, { reason: 'audio_not_found', field: null }, open, () => {})).title).toBe('Expected 404 audio_not_found');
    expect(failure(() => expectErrorOrOpen(exchange(200, listBody), { reason: 'audio_not_found', field: null }, open, () => {})).title).toBe('Expected 404 audio_not_found');
  });
});

test('one isJsonMediaType: the checks and the contract reading share it; a subtype may hold `+` before +json (RFC 6838 §4.2)', async () => {
  const meaning = await import('../judge/openapi-meaning.ts');
  expect(meaning.isJsonMediaType).toBe(isJsonMediaType);
  expect(isJsonMediaType('application/vnd.a+b+json')).toBe(true);
});

test('isJsonMediaType reads the essence of the media type', () => {
  expect(['application/json', 'application/json ; charset=utf-8', 'application/problem+json', 'Application/Vnd.A.B+Json'].every(isJsonMediaType)).toBe(true);
  expect(['', 'text/json', 'application/jsonx', 'application/json+xml', 'json', 'application/x-ndjson'].some(isJsonMediaType)).toBe(false);
});

test('expectJson returns the parsed body', () => {
  expect(expectJson(exchange(200, { a: [1] }))).toEqual({ a: [1] });
});

test('describe() summarises a response and a transport error', () => {
  expect(describeExchange(err(422))).toMatch(/^GET \/external\/v1\/encounters\?limit=0 → 422 \{"error":"api_key_validation_failed"/);
  expect(describeExchange(transportFailure())).toBe(`GET ${LIST} → transport timeout: no complete response within 300 ms`);
});

test('fail() throws a CheckFailure with the title and detail', () => {
  const f = failure(() => fail('Total is not the number of matches', 'total 1, counted 3'));
  expect(f.title).toBe('Total is not the number of matches');
  expect(f.detail).toBe('total 1, counted 3');
});

test('reasonOf reads the reason_code of a JSON body, as text or bytes, by value, and never throws', () => {
  const body = { error: 'api_key_unauthorized', reason_code: 'invalid_key', field: null, message: 'x' };
  expect(reasonOf(JSON.stringify(body))).toBe('invalid_key');
  expect(reasonOf(Buffer.from(JSON.stringify(body)))).toBe('invalid_key');
  // JSON by value: spacing and \u escapes do not matter (a text pattern would have missed the second).
  expect(reasonOf(JSON.stringify(body, null, 2))).toBe('invalid_key');
  expect(reasonOf('{"reason_code":"invalid\\u005fkey"}')).toBe('invalid_key');
  // A reason_code inside another field's text is not the body's reason_code.
  expect(reasonOf('{"message":"\\"reason_code\\":\\"revoked_key\\""}')).toBeUndefined();
  for (const bad of [undefined, '', 'not json', '<html>', 'null', '[]', '{"reason_code":7}']) expect(reasonOf(bad), String(bad)).toBeUndefined();
});

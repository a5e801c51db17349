// The switchboard's variants: the dual of the mutants. Each variant is one legitimate choice the
// specification allows (its clause and a one-line justification beside it); the variant meta-suite
// (tests/variants.spec.ts) runs every check with every variant on and requires zero `fail`. Off unless a
// request carries the switchboard token and `x-switchboard-variant: NAME[,NAME...]`. Several variants may be
// on at once: they are independent choices, and a conformant service may make all of them together.
// Variants apply as named overrides of the reference's named points (overrides.ts; grep the name to find where).

export interface Variant {
  /** The part of the service the choice concerns. */
  area: string;
  /** Where the specification leaves the choice open (section, or an RFC the spec brings in). */
  clause: string;
  /** Why a conformant service may do this. */
  justification: string;
  /** Variants that cannot be on together with this one (two answers to the same open question). */
  excludes?: readonly string[];
  /**
   * What a service making this choice declares in its target profile, because the spec leaves the choice to the
   * service and the harness takes it as a setting (§6.2's header word): the variant meta-suite runs the bundle
   * holding it with this merged into the profile. Variants with different declarations never share a bundle.
   */
  profile?: { webhook?: { headerWord?: string } };
}

export const VARIANTS = {
  // ---------------------------------------------------------------- REST: HTTP framing and headers
  'http-chunked': { area: 'http', clause: '§4 (success status 200 with application/json); RFC 9112 §7.1', justification: 'The spec fixes status and media type, not framing: chunked transfer coding is valid HTTP/1.1 framing for any response.' },
  'http-connection-close': { area: 'http', clause: '§4; RFC 9112 §9.6', justification: 'A server may close the connection after every response (Connection: close); persistence is not part of the contract.' },
  'http-content-type-charset': { area: 'http', clause: '§4 (application/json); RFC 8259 §11, RFC 9110 §8.3.1', justification: 'application/json; charset=utf-8 is the same media type with a parameter (which has no effect for JSON).' },
  'http-error-json-suffix': { area: 'http', clause: '§4 (failure responses use the error body of §7); RFC 6839 §3.1', justification: 'The spec gives the error body, not its media type: a +json structured-syntax type is JSON.' },
  'http-header-casing': { area: 'http', clause: 'RFC 9110 §5.1', justification: 'Header field names are case-insensitive; the wire casing (Content-Type, CACHE-CONTROL) carries no meaning.' },
  'http-extra-headers': { area: 'http', clause: 'RFC 9110 §5 (unrecognised fields are ignored)', justification: 'The contract lists no response headers; request ids, ETag, Vary, HSTS and a detailed WWW-Authenticate are allowed additions.' },
  'http-head-like-get': { area: 'http', clause: '§1 (all routes use HTTP GET); RFC 9110 §9.3.2', justification: 'HEAD is GET without a body; answering it like GET changes nothing (CONTRACT-NON-GET-METHODS leaves other methods open).' },
  'non-get-as-plain-404': { area: 'http', clause: '§1 (CONTRACT-NON-GET-METHODS: the answer to other methods is not shown)', justification: 'A front end that routes only GET answers other methods 404 with its own body; nothing changes.' },
  // ---------------------------------------------------------------- REST: JSON by value
  'json-pretty-printed': { area: 'json', clause: 'RFC 8259 §2 (insignificant whitespace)', justification: 'Indentation and a trailing newline do not change the JSON value.' },
  'json-key-order-reversed': { area: 'json', clause: 'RFC 8259 §4 (an object is an unordered collection)', justification: 'Member order carries no meaning; every object is sent with its members in reverse order.' },
  'json-escaped-text': { area: 'json', clause: 'RFC 8259 §7', justification: 'Non-ASCII characters and "/" may be written as \\u escapes (and "\\/"); the string value is the same.' },
  'error-messages-other-text': { area: 'json', clause: '§7 (message: human-readable summary)', justification: 'Only error, reason_code and field are stable; the message text is free, here another language with non-ASCII text.' },
  // ---------------------------------------------------------------- REST: timestamps in other RFC 3339 forms
  'timestamps-offset-plus-0530': { area: 'timestamps', clause: '§2 (timestamps are ISO 8601 date-time strings); RFC 3339 §5.6', justification: 'An instant may be written with any offset: 2025-01-15T14:00:00.000+05:30 is the same instant as 08:30Z.', excludes: ['timestamps-offset-minus-0800'] },
  'timestamps-offset-minus-0800': { area: 'timestamps', clause: '§2; RFC 3339 §5.6', justification: 'A negative offset (which may move the calendar date back a day) names the same instant.', excludes: ['timestamps-offset-plus-0530'] },
  'timestamps-fraction-varies': { area: 'timestamps', clause: '§2; RFC 3339 §5.6 (time-secfrac is optional and of any length)', justification: 'Whole seconds without a fraction, other instants with six fractional digits: the same instants.' },
  // ---------------------------------------------------------------- REST: optional fields absent instead of null
  'list-items-without-documents': { area: 'optional-fields', clause: '§2.1 (documents: required no), §2.8 (the detail includes them)', justification: 'Summaries in the list may leave out documents; the encounter detail still carries them.' },
  'null-optional-fields-omitted': { area: 'optional-fields', clause: '§2.1-§2.6 (Required: no)', justification: 'An optional field whose value is null may be absent instead; the closed schemas require only the required fields.' },
  'empty-documents-omitted-in-list': { area: 'optional-fields', clause: '§2.1 (documents: required no), §2.8 (the detail includes them; ENC-DETAIL-DOCUMENTS-PRESENT)', justification: 'A list item of an encounter without documents may leave documents out instead of sending an empty array; the encounter detail still carries documents: [].' },
  'clinical-content-format-omitted': { area: 'optional-fields', clause: '§2.4 (format: constant markdown, default markdown); FIELD-CLINICAL-CONTENT-SUBFIELDS', justification: 'A property with a default may be left out: content without format means markdown.' },
  // ---------------------------------------------------------------- REST: the open choices of the catalog (level unspecified)
  'audio-missing-as-not-available': { area: 'open-choice', clause: '§4.5, §7.2; AUDIO-NOT-FOUND-VS-NOT-AVAILABLE', justification: 'Audio referenced but missing from storage may be read as "no audio for the document": 400 audio_not_available_for_document instead of 404 audio_not_found.' },
  'other-encounter-document-as-encounter-not-found': { area: 'open-choice', clause: '§4.3; DOC-WRONG-ENCOUNTER-REASON', justification: 'A document addressed under an encounter it does not belong to may be answered 404 encounter_not_found (the pair is not found); the reason is not stated.' },
  'lookup-document-before-organization': { area: 'open-choice', clause: '§4 step (6); ORDER-LOOKUP-INTERNAL', justification: 'Inside the lookup step the order is open: an unknown document under another organization\'s encounter may answer document_not_found before cross_organization_denied, and a demo encounter is judged before ownership.' },
  'tie-breaker-always-ascending': { area: 'open-choice', clause: '§4.1 (encounter_id as a deterministic tie-breaker); LIST-TIE-BREAKER-DIRECTION', justification: 'Ties on created_at ordered by encounter_id ascending whatever sort_order says.', excludes: ['tie-breaker-against-sort-order'] },
  'tie-breaker-against-sort-order': { area: 'open-choice', clause: '§4.1; LIST-TIE-BREAKER-DIRECTION', justification: 'The direction of the tie-breaker is not stated: ties ordered by encounter_id against sort_order are still a deterministic total order.', excludes: ['tie-breaker-always-ascending'] },
  'start-not-before-end-field-end-at': { area: 'open-choice', clause: '§4.1 (reason code when start_at >= end_at: not shown); LIST-START-BEFORE-END-REASON', justification: 'The relation is refused with 422 invalid_query naming end_at (the other parameter of the pair).' },
  'query-errors-reverse-order': { area: 'open-choice', clause: '§4 step (5); ORDER-MULTIPLE-QUERY-ERRORS', justification: 'Several invalid parameters at once: validated in reverse order (end_at … limit), so another of the matching 422 reasons wins.' },
  'duplicate-keys-last-wins': { area: 'open-choice', clause: '§4.1; LIST-DUPLICATE-KEYS', justification: 'A supported key given twice is not addressed: the last value is used.', excludes: ['duplicate-keys-first-wins'] },
  'duplicate-keys-first-wins': { area: 'open-choice', clause: '§4.1; LIST-DUPLICATE-KEYS', justification: 'A supported key given twice is not addressed: the first value is used, the rest ignored.', excludes: ['duplicate-keys-last-wins'] },
  'unsupported-filter-names-last-key': { area: 'open-choice', clause: '§7.2 (field: the offending key); ORDER-MULTIPLE-QUERY-ERRORS', justification: 'With several unsupported keys each one is "the offending key": the last of them may be named.' },
  'datetime-extra-iso-forms': { area: 'open-choice', clause: '§4.1 (timezone-aware ISO datetime); LIST-DATETIME-FORMAT-DETAILS', justification: 'Other timezone-aware ISO 8601 / RFC 3339 spellings are accepted too: lowercase t and z, a space separator, an hour-only offset (+05).' },
  'error-404-category-not-found': { area: 'open-choice', clause: '§7.1 (404 category: not shown); ERR-404-CATEGORY', justification: 'Any category string may accompany a 404; here "not_found".' },
  'field-sanitize-replace': { area: 'open-choice', clause: '§7 (sanitized query field name); ERR-FIELD-SANITIZATION', justification: 'How a key is sanitized is not shown: characters outside [A-Za-z0-9_.-] become "_" and the name is cut at 40 characters; plain keys stay verbatim.', excludes: ['field-sanitize-strip-null'] },
  'field-sanitize-strip-null': { area: 'open-choice', clause: '§7 (field: sanitized query field name when applicable, otherwise null); ERR-FIELD-SANITIZATION', justification: 'How a key is sanitized is not shown: characters outside [A-Za-z0-9_.-[]] are dropped, and a key with nothing left (лимит) has no name to give, so field is null; plain keys stay verbatim.', excludes: ['field-sanitize-replace'] },
  'non-bearer-scheme-as-malformed': { area: 'open-choice', clause: '§5 item 5; AUTH-401-NON-BEARER-SCHEME', justification: 'An Authorization header with another scheme (Basic) may count as a malformed token rather than a missing bearer key.' },
  'demo-encounters-listed': { area: 'open-choice', clause: '§4.2 (stated for the single-encounter route only); LIST-DEMO-TRAINING', justification: 'Whether the list includes the caller\'s demo/training encounters is not stated; the detail route still refuses them.' },
  'audio-url-short-lifetime': { area: 'open-choice', clause: '§2.6, §8 (audio URL lifetime: not shown); AUDIO-URL-LIFETIME', justification: 'The signed URL may live 60 seconds only; expires_at still lies in the future.' },
  'audio-storage-clock-behind': { area: 'storage', clause: '§8 (audio URL validity ends at expires_at, read on the storage\'s clock); LIMIT-AUDIO-VALIDITY', justification: 'Storage judges expiry on its own clock, here half a second behind the harness\'s: it still serves the URL just past expires_at by the harness\'s clock and refuses it soon after, as any NTP-synced store may.' },

  // ---------------------------------------------------------------- (other areas append their blocks below)
  'invalid-request-line-http09-answer': { area: 'http', clause: 'RFC 9112 §3 (an invalid request-line: a 400 is recommended, not required); §4.1 says nothing of it', justification: 'A request line with a raw space in the target is answered as Python\'s http.server answers it: an HTML body with no status line (HTTP/0.9\'s form, the version being unknown), then the connection is closed. The request is not accepted.' },
  'front-proxy-duplicate-authorization': { area: 'http', clause: 'RFC 9110 §5.3 (Authorization is a singleton field: a request with two may be refused); §5 says nothing of it', justification: 'A request with two Authorization headers is refused by a front proxy (nginx: "client sent duplicate header line") with its own 400 text/html page before the service sees it.' },
  'front-proxy-outside-routes': { area: 'http', clause: '§1 (five routes under /external/v1); RFC 3986 §5.2.4 (dot segments)', justification: 'A path with a dot segment, an encoded slash or backslash or a NUL names none of the five routes; a front proxy (nginx) may refuse it itself, here 400 text/html, before the service sees it.' },
  // ---------------------------------------------------------------- OpenAPI: the served document written another way (served-contract.ts)
  'openapi-no-webhook': { area: 'openapi', clause: '§1 (a machine-readable schema of contract v1), §6 (the webhook contract)', justification: 'Nothing requires the REST document to describe the webhook: webhooks and its two schemas are left out.' },
  'openapi-nullable-anyof': { area: 'openapi', clause: '§2 ("string or null"); JSON Schema 2020-12 §10.2.1.2 (anyOf)', justification: 'type: [X, "null"] written as anyOf [{type: X}, {type: "null"}] accepts exactly the same values.' },
  'openapi-closed-by-unevaluated': { area: 'openapi', clause: '§2 (no additional properties); JSON Schema 2020-12 §11.3 (unevaluatedProperties)', justification: 'unevaluatedProperties: false instead of additionalProperties: false rejects the same undeclared fields.' },
  'openapi-allof-wrappers': { area: 'openapi', clause: '§2; JSON Schema 2020-12 §10.2.1.1 (allOf)', justification: 'Each $ref wrapped as {allOf: [{$ref}], description}: the same constraints, with a place for a description.' },
  'openapi-renamed-components': { area: 'openapi', clause: '§1, §2 (the type names label resources; nothing makes them component names)', justification: 'Component schemas under other names (V1EncounterSummary …) with every $ref and discriminator mapping following them.' },
  'openapi-inlined-schemas': { area: 'openapi', clause: '§1, §2', justification: 'Every schema written inline where it is used, with no components.schemas at all: the same bodies are accepted.' },
  'openapi-shared-responses': { area: 'openapi', clause: '§4; OpenAPI 3.1 §4.8.7 (components)', justification: 'Error responses and parameters defined once under components and referenced: another layout of the same statuses and parameters.' },
  'openapi-other-operation-ids': { area: 'openapi', clause: '§4.3-§4.5 (no operation name given)', justification: 'Only listPublicEncounters and getPublicEncounter are named by the spec; the other three operationIds are free.' },
  'openapi-json-media-parameters': { area: 'openapi', clause: '§4 (application/json; failure responses use the error body of §7); RFC 6839 §3.1', justification: 'Success bodies described under "application/json; charset=utf-8", errors under application/problem+json: JSON either way.' },
  'openapi-harmless-additions': { area: 'openapi', clause: '§1, §5.1; OpenAPI 3.1 (annotations)', justification: 'Descriptions, summaries, tags, servers, contact and license, externalDocs, x- extensions, bearerFormat, examples and explicit style: form / explode: true (the defaults) change no meaning.' },
  'openapi-base-path-in-servers': { area: 'openapi', clause: '§1 (routes under /external/v1); OpenAPI 3.1 §4.8.10 (paths are relative to the server URL)', justification: 'servers carries /external/v1 and paths start at /encounters: a client reaches the same five routes.' },
  'openapi-keys-reordered': { area: 'openapi', clause: 'RFC 8259 §4 (objects are unordered)', justification: 'Every object of the document with its members in reverse alphabetical order.' },
  // ---------------------------------------------------------------- webhook sender: choices §6.2 leaves to the service
  'webhook-header-word-ceapi': { area: 'webhook-sender', clause: '§6.2 (the header names use a neutral word where the service\'s own name would stand); WEBHOOK-HEADER-PREFIX', justification: 'A service named Ceapi sends Ceapi-Event-Id, Ceapi-Delivery-Id, Ceapi-Timestamp, Ceapi-Signature and Ceapi-Webhook-Version; its profile says so (webhook.headerWord).', profile: { webhook: { headerWord: 'Ceapi' } } },
  'webhook-signature-uppercase-hex': { area: 'webhook-sender', clause: '§6.2 (an HMAC-SHA256 digest (hexadecimal text)); WEBHOOK-SIG-UPPERCASE-HEX', justification: 'Hexadecimal text may be written with A-F: the same digest; the catalog leaves the case open (informational, with an interop note).' },
  'openapi-oai-media-type': { area: 'openapi', clause: '§1 (served at /openapi/v1/openapi.json); RFC 6839 §3.1 (+json)', justification: 'The document served as application/vnd.oai.openapi+json;version=3.1.0, the registered OpenAPI media type: JSON.' },
  // ---------------------------------------------------------------- REST: date-time ranges of a service's date type (issue 30)
  'datetime-offsets-within-18h': { area: 'open-choice', clause: '§4.1 (timezone-aware ISO datetime); LIST-DATETIME-FORMAT-DETAILS', justification: 'Real UTC offsets lie within -12:00..+14:00; a date type limited to ±18:00 (java.time.ZoneOffset) refuses +23:59, which RFC 3339\'s grammar allows but no zone uses, with 422 invalid_query.' },
  'datetime-fraction-nine-digits-max': { area: 'open-choice', clause: '§4.1; LIST-DATETIME-FORMAT-DETAILS; ISO 8601-1 (the number of decimal digits is by agreement)', justification: 'Fractions of more than nine digits (below a nanosecond) are refused with 422 invalid_query; shorter ones are compared exactly.' },
  'datetime-years-from-1583': { area: 'open-choice', clause: '§4.1; LIST-DATETIME-FORMAT-DETAILS; ISO 8601-1 (years before 1583 only by agreement)', justification: 'Years before 1583, outside ISO 8601\'s default range, are refused with 422 invalid_query.' },
  // ---------------------------------------------------------------- the catalog's open choices in the served document, and the §2 tables as written
  'openapi-content-subfields-required': { area: 'openapi', clause: '§2.4 (content: format …, text …); FIELD-CLINICAL-CONTENT-SUBFIELDS', justification: 'Whether format and text are required inside content is not stated: a service that always sends both may document both as required.' },
  'openapi-summary-nulls-unencoded': { area: 'openapi', clause: '§2.3 (status, workflow_variant, audio_duration_seconds: "… or null"); FIELD-DOCSUMMARY-CLINICAL-NULLS', justification: 'The document summary schema types the three fields exactly as the §2.3 table does; the sentence below the table (a clinical summary carries null) is a statement about bodies, verified on them, not a column of the table.' },
  'openapi-other-summaries-null': { area: 'openapi', clause: '§2.3; FIELD-DOCSUMMARY-OTHER-TYPES-NULLS', justification: 'The values on billing and checklist summaries are not stated: a service whose such summaries carry null may document that as it does for clinical ones.' },
  'openapi-rate-limit-documented': { area: 'openapi', clause: '§8 (rate limits: not shown); LIMIT-RATE-LIMITS', justification: 'A service that rate-limits documents its 429 on every route; the spec shows no rate limits, so neither forbids that nor gives the 429 a body.' },
  'openapi-errors-pinned-per-response': { area: 'openapi', clause: '§7.1, §7.2, §4 (error categories, the reasons of each route, the field of each reason); ERR-404-CATEGORY', justification: 'Each error response documents the body as the specification decides it for that route and status (allOf: the category, the route\'s reasons, each reason\'s field; 404 with the service\'s own category), as a team describing its own service does: narrower than the one shared error schema, and refusing only bodies no conformant service sends.' },
  'openapi-datetime-whole-seconds': { area: 'openapi', clause: '§4.1 (timezone-aware ISO datetime); LIST-DATETIME-FORMAT-DETAILS', justification: 'start_at and end_at documented with a pattern for the extended form with whole seconds and Z or ±hh:mm only: the other ISO 8601 forms are left open, so documenting them as refused is allowed.' },
  // ---------------------------------------------------------------- REST bodies: the open choices of the judging contract
  'clinical-content-text-omitted': { area: 'optional-fields', clause: '§2.4 (text: string or null, "clinical document text when available"); FIELD-CLINICAL-CONTENT-SUBFIELDS', justification: 'Whether text is required inside content is not stated: a deployment whose clinical text is not available to the public contract leaves text out instead of sending null.' },
} as const satisfies Record<string, Variant>;

export type VariantName = keyof typeof VARIANTS;

export function isVariantName(name: string): name is VariantName {
  return Object.hasOwn(VARIANTS, name);
}

// Whether a media type names JSON, the one definition the checks and the contract reading share.

/**
 * application/json or a +json structured-syntax suffix type (RFC 6839 §3.1; the subtype's restricted-name
 * characters include `+`, RFC 6838 §4.2), in any case (RFC 9110 §8.3.1: type and subtype are
 * case-insensitive), with any parameters (a charset parameter has no effect for JSON, RFC 8259 §11).
 */
export function isJsonMediaType(value: string | undefined): boolean {
  const essence = (value ?? '').split(';')[0]!.trim().toLowerCase();
  return /^application\/(?:[a-z0-9!#$&^_.+-]+\+)?json$/.test(essence);
}

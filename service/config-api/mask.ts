/**
 * How secrets leave the service when they must be hinted at: never whole, never by length.
 * A mask is a fixed `****`, plus the last 4 characters only for values of 16+ characters
 * (short values would give away too large a share).
 */
export const MASK = '****';

export function maskSecret(value: string): string {
  if (value === '') return '';
  return value.length >= 16 ? `${MASK}${value.slice(-4)}` : MASK;
}

/** Field names that hold credentials: api_key, apiKey, botToken, client_secret, password, auth... */
export function looksSecret(name: string): boolean {
  return /key|token|secret|passw|auth|credential|cookie/i.test(name);
}

/** Known secret values shorter than this are not searched for inside other strings. */
const MIN_KNOWN_SECRET = 8;

/**
 * A copy of a JSON value with secrets masked: every string or number under a field whose name
 * looks secret (at any depth), and every string that contains one of `knownSecrets` (the
 * values of the active env file), wherever it sits. Booleans and null are kept: they carry no
 * secret and say whether one is set.
 */
export function maskDeep(value: unknown, knownSecrets: readonly string[] = []): unknown {
  const known = knownSecrets.filter((s) => s.length >= MIN_KNOWN_SECRET);
  const walk = (node: unknown, secret: boolean): unknown => {
    if (typeof node === 'string') return secret || known.some((s) => node.includes(s)) ? maskSecret(node) : node;
    if (typeof node === 'number') return secret ? MASK : node;
    if (Array.isArray(node)) return node.map((item) => walk(item, secret));
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, secret || looksSecret(k))]));
    }
    return node;
  };
  return walk(value, false);
}

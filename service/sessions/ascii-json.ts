/**
 * JSON text in ASCII only: every character past ASCII written as its `\u` escape, which is the
 * same JSON. A file of it is read back as a one-byte string (`readText`, the session index's
 * snapshot): one accented title makes UTF-8's decoder build a two-byte string of the whole file.
 */
const NON_ASCII = /[\u0080-\uffff]/g;
const escaped = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `json` with every character past ASCII escaped. */
export function asciiJson(json: string): string {
  return json.replace(NON_ASCII, escaped);
}

/**
 * `asciiJson(JSON.stringify(value))` in pieces, its objects opened `depth` levels down (plain
 * data only: no toJSON, no holes). One accented title makes a document's JSON a two-byte string
 * of twice its length: in pieces, only one column's lives at a time, and the escaped pieces are
 * one byte a character.
 */
export function asciiJsonPieces(value: unknown, depth: number, out: string[] = []): string[] {
  if (depth === 0 || value === null || typeof value !== 'object' || Array.isArray(value)) {
    out.push(asciiJson(JSON.stringify(value)));
    return out;
  }
  let next = '{';
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out.push(`${next}${asciiJson(JSON.stringify(key))}:`);
    next = ',';
    asciiJsonPieces(v, depth - 1, out);
  }
  out.push(next === '{' ? '{}' : '}');
  return out;
}

/**
 * Pure parsing of multipart/form-data heads (RFC 7578): the request's boundary and each
 * part's header block, kept raw enough to tell an absent Content-Type from a sent one and
 * an empty `filename=""` from none. Header blocks come in as latin1 (byte) strings; names
 * and values are decoded as UTF-8, as browsers send them.
 */

/** What a part's head says about it. */
export interface PartInfo {
  /** The `name` parameter. */
  name: string | undefined;
  /** `filename*` (RFC 5987) else `filename`: '' when sent empty, undefined when absent. */
  filename: string | undefined;
  /** `type/subtype` in lower case when a parseable Content-Type was sent; undefined when absent. */
  contentType: string | undefined;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Field values: visible ASCII, space, tab and obs-text; no other control byte (a NUL is malformed). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** More header lines than any form part needs. */
const MAX_HEADER_LINES = 100;

/** The boundary of a `multipart/form-data` Content-Type, or undefined when it is not one. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  const parsed = contentType === undefined ? undefined : parseParameterized(contentType);
  if (!parsed || parsed.value.toLowerCase() !== 'multipart/form-data') return undefined;
  const boundary = parsed.params.get('boundary');
  return boundary && boundary.length <= 200 ? boundary : undefined;
}

/**
 * A part's header block (without the blank line), or undefined when it is malformed.
 * A part without a form-data Content-Disposition is reported with `skip`.
 */
export function parsePartHead(block: string): { info: PartInfo; skip: boolean } | undefined {
  const headers = parseHeaderBlock(block);
  if (!headers) return undefined;
  const disposition = parseParameterized(headers.get('content-disposition') ?? '');
  const skip = !disposition || disposition.value.toLowerCase() !== 'form-data';
  const params = disposition?.params ?? new Map<string, string>();
  const info: PartInfo = {
    name: decodeParam(params.get('name')),
    filename: extendedParam(params.get('filename*')) ?? decodeParam(params.get('filename')),
    contentType: mediaType(headers.get('content-type')),
  };
  return { info, skip };
}

/** Header lines (obs-folded continuations joined) into lower-cased name -> first value. */
function parseHeaderBlock(block: string): Map<string, string> | undefined {
  const headers = new Map<string, string>();
  if (block === '') return headers;
  const lines: string[] = [];
  for (const line of block.split('\r\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    else lines.push(line);
  }
  if (lines.length > MAX_HEADER_LINES) return undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!TOKEN.test(name) || !FIELD_VALUE.test(value)) return undefined;
    const key = name.toLowerCase();
    if (!headers.has(key)) headers.set(key, value);
  }
  return headers;
}

/** `type; a=b; c="d \"e\""` into the leading value and lower-cased parameter names. */
function parseParameterized(header: string): { value: string; params: Map<string, string> } | undefined {
  const params = new Map<string, string>();
  let i = header.indexOf(';');
  const value = (i === -1 ? header : header.slice(0, i)).trim();
  if (value === '') return undefined;
  while (i !== -1 && i < header.length) {
    i++; // past ';'
    const eq = header.indexOf('=', i);
    if (eq === -1) break;
    const name = header.slice(i, eq).trim().toLowerCase();
    let j = eq + 1;
    while (header[j] === ' ' || header[j] === '\t') j++;
    let raw: string;
    if (header[j] === '"') {
      const quoted = readQuoted(header, j);
      if (!quoted) return undefined;
      raw = quoted.text;
      i = header.indexOf(';', quoted.end);
    } else {
      i = header.indexOf(';', j);
      raw = (i === -1 ? header.slice(j) : header.slice(j, i)).trim();
    }
    if (name !== '' && !params.has(name)) params.set(name, raw);
  }
  return { value, params };
}

/** A quoted-string starting at `start` (the opening quote), backslash escapes undone. */
function readQuoted(text: string, start: number): { text: string; end: number } | undefined {
  let out = '';
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) out += text[++i];
    else if (c === '"') return { text: out, end: i + 1 };
    else out += c;
  }
  return undefined;
}

/** A plain parameter's bytes, read as UTF-8 (what browsers send). */
function decodeParam(raw: string | undefined): string | undefined {
  return raw === undefined ? undefined : Buffer.from(raw, 'latin1').toString('utf8');
}

/** An RFC 5987 `charset'lang'%XX` value in UTF-8 or Latin-1; undefined when absent or unreadable. */
function extendedParam(raw: string | undefined): string | undefined {
  const match = raw === undefined ? null : /^([^']*)'[^']*'(.*)$/.exec(raw);
  if (!match) return undefined;
  const charset = match[1]!.toLowerCase();
  const encoding = charset === 'utf-8' || charset === 'utf8' ? 'utf8' : charset === 'iso-8859-1' || charset === 'latin1' ? 'latin1' : undefined;
  if (!encoding || /%(?![0-9a-fA-F]{2})/.test(match[2]!)) return undefined;
  const bytes = Buffer.from(match[2]!.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  return bytes.toString(encoding);
}

/** `type/subtype` of a Content-Type, lower-cased without parameters; undefined when absent or unparseable. */
function mediaType(header: string | undefined): string | undefined {
  const parsed = header === undefined ? undefined : parseParameterized(header);
  const [type, subtype, ...rest] = parsed ? parsed.value.split('/') : [];
  if (!type || !subtype || rest.length > 0 || !TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  return `${type}/${subtype}`.toLowerCase();
}

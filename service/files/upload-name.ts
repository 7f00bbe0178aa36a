import path from 'node:path';

/** Room kept under NAME_MAX (255 bytes) for the `_<hash>` a name collision adds. */
const MAX_NAME_BYTES = 255 - 17;
/** An extension longer than this is not kept apart when a long name is cut. */
const MAX_SUFFIX_BYTES = 32;
/** C0 and C1 controls, DEL, and the bidi marks and overrides that disguise an extension. */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Separators and the characters Windows refuses in names. */
const FORBIDDEN = /[\\/:*?"<>|]/g;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/**
 * The uploaded name reduced to one safe file name: the last component only, no control or
 * bidi characters, no separators, no `.`/`..`, no leading dash, no trailing dot or space,
 * no Windows device name, at most 238 UTF-8 bytes. `upload` when nothing is left.
 */
export function safeUploadName(raw: string | undefined): string {
  let name = (raw ?? '').normalize('NFC').replace(INVISIBLE, '');
  name = name.split(/[\\/]/).pop() ?? '';
  name = name.replace(FORBIDDEN, '_').trim().replace(/[. ]+$/, '');
  if (name.startsWith('-')) name = `_${name.slice(1)}`;
  if (WINDOWS_DEVICE.test(name)) name = `_${name}`;
  name = fitBytes(name);
  return /^\.*$/.test(name) ? 'upload' : name;
}

/** The names tried in turn for an upload: as is, then `<stem>_<8 hex><suffix>`, then 16 hex. */
export function candidateNames(name: string, hash: string): string[] {
  const suffix = path.extname(name);
  const stem = name.slice(0, name.length - suffix.length);
  return [name, `${stem}_${hash.slice(0, 8)}${suffix}`, `${stem}_${hash.slice(0, 16)}${suffix}`];
}

function fitBytes(name: string): string {
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const ext = path.extname(name);
  const suffix = Buffer.byteLength(ext) <= MAX_SUFFIX_BYTES ? ext : '';
  return cutBytes(name.slice(0, name.length - suffix.length), MAX_NAME_BYTES - Buffer.byteLength(suffix)) + suffix;
}

/** The longest prefix of `text` within `max` UTF-8 bytes, never splitting a character. */
function cutBytes(text: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > max) break;
    out += char;
  }
  return out;
}

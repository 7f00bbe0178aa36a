/**
 * What the user pasted into submit: either the whole redirect URL rclone's listener would
 * have received (`http://127.0.0.1:53682/?state=..&code=..`), its query alone, or just the
 * code. Pure, so every shape is unit-tested.
 */
export type SubmittedCode =
  | { kind: 'code'; code: string; state: string | undefined }
  | { kind: 'denied'; error: string }
  | { kind: 'invalid'; reason: string };

const MAX_INPUT = 8192;

export function parseSubmittedCode(input: string): SubmittedCode {
  const text = input.trim();
  if (text === '') return { kind: 'invalid', reason: 'code is empty' };
  if (text.length > MAX_INPUT) return { kind: 'invalid', reason: 'code is too long' };
  const params = queryOf(text);
  if (!params) {
    if (/\s/.test(text)) return { kind: 'invalid', reason: 'code contains white space' };
    return { kind: 'code', code: text, state: undefined };
  }
  const error = params.get('error');
  if (error) return { kind: 'denied', error: error.slice(0, 200) };
  const code = params.get('code');
  if (!code) return { kind: 'invalid', reason: 'the redirect URL has no code' };
  return { kind: 'code', code, state: params.get('state') ?? undefined };
}

/** The query of a URL or of a bare `a=b&c=d` string; undefined for a plain code. */
function queryOf(text: string): URLSearchParams | undefined {
  if (/^https?:\/\//i.test(text)) {
    try {
      return new URL(text).searchParams;
    } catch {
      return undefined;
    }
  }
  const query = text.startsWith('?') ? text.slice(1) : text;
  if (!/(^|&)(code|error|state)=/.test(query)) return undefined;
  return new URLSearchParams(query);
}

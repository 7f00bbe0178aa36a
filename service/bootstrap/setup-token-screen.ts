import { hyperlinks, terminalText } from './terminal-text.js';

/**
 * What `claude setup-token` shows (research: clia-protocol §10, recorded sessions in
 * test/fixtures/bootstrap/): a sign-in link, an input box for `code#state`, then either the
 * long-lived token (`sk-ant-oat01-…`) or `✘ OAuth error: <why>` with "Press Enter to retry".
 */

/**
 * The authorize URL: the hyperlink target when the CLI draws one (never wrapped), else the
 * first oauth/authorize URL in the visible text.
 */
export function findAuthorizeUrl(raw: string): string | undefined {
  const linked = hyperlinks(raw).find(isAuthorizeUrl);
  if (linked) return linked;
  const shown = /https:\/\/\S*\/oauth\/authorize\S*/.exec(terminalText(raw))?.[0];
  return shown && isAuthorizeUrl(shown) ? shown : undefined;
}

function isAuthorizeUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.pathname.endsWith('/oauth/authorize');
  } catch {
    return false;
  }
}

/** The token, once it is drawn whole (followed by something that cannot be part of it). */
export function findOAuthToken(raw: string): string | undefined {
  return /(sk-ant-oat\d{2}-[A-Za-z0-9_-]{16,})(?=[^A-Za-z0-9_-])/.exec(terminalText(raw))?.[1];
}

/** The CLI's own error text, e.g. `OAuth error: Couldn't get an answer from the sign-in service (EAI_AGAIN). …`. */
export function findOAuthError(raw: string): string | undefined {
  const line = /OAuth error:[^\n]*/.exec(terminalText(raw))?.[0];
  if (!line) return undefined;
  return line.replace(/\s+Press\s+Enter\s+to\s+retry.*$/, '').replace(/\s+/g, ' ').trim();
}

/** Errors that mean the pasted code itself was refused (400) rather than the sign-in service failing (502). */
export function isRefusedCode(error: string): boolean {
  return /wasn't accepted|not accepted|invalid|access_denied|expired|refused|denied|\(HTTP 4\d\d\)/i.test(error) && !/\(E[A-Z]+\)/.test(error);
}

/** The last non-empty visible line: what the CLI said before it stopped. */
export function lastLine(raw: string): string {
  const lines = terminalText(raw)
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  return (lines.at(-1) ?? '').slice(0, 300);
}

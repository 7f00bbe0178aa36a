import { terminalText } from './terminal-text.js';

/**
 * `codex login --device-auth` output (research: clib-protocol §11; recorded in
 * test/fixtures/bootstrap/): stdout names the verification link after "Open this link" and
 * the user code after "Enter this one-time code"; stderr says `Error logging in: <why>`.
 */
export interface DevicePrompt {
  verification_url: string;
  user_code: string;
}

export function findDevicePrompt(stdout: string): DevicePrompt | undefined {
  const text = terminalText(stdout);
  const url = /Open this link[^\n]*\n\s*(https?:\/\/\S+)/.exec(text)?.[1];
  const code = /Enter this one-time code[^\n]*\n\s*(\S+)/.exec(text)?.[1];
  return url && code ? { verification_url: url, user_code: code } : undefined;
}

/** The CLI's error line (`Error logging in: …`, `No API key provided via stdin.`), else its last line. */
export function loginError(stderr: string): string {
  const lines = terminalText(stderr)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('WARNING:'));
  const error = lines.find((l) => /^Error\b/.test(l)) ?? lines.at(-1) ?? 'no output';
  return error.slice(0, 300);
}

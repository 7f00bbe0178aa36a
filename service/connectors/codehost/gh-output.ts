/**
 * What `gh auth login --web` prints on a pipe (gh 2.23, recorded in
 * shared/research/connectors-usage.md §2.3):
 *   ! First copy your one-time code: WDJB-MJHT
 *   Open this URL to continue in your web browser: https://github.com/login/device
 */
export function parseUserCode(line: string): string | undefined {
  return /one-time code:\s*([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(line)?.[1];
}

export function parseVerificationUri(line: string): string | undefined {
  return /(https?:\/\/\S+\/login\/device)\b/.exec(line)?.[1];
}

/** The last line gh wrote that says what went wrong (never one holding a token: gh prints none there). */
export function ghFailure(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.at(-1) ?? 'the code-host CLI failed without a message';
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}

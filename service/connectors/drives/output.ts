/**
 * Pure readers of what rclone 1.60 prints (recorded in shared/research/connectors-usage.md
 * §1.2-1.4): the authorize link on stderr, the token block on stdout, the JSON question of a
 * `--non-interactive` config step, and a readable error from a failed run.
 */

/** `NOTICE: Please go to the following link: http://127.0.0.1:53682/auth?state=...` */
export function parseAuthLink(line: string): { url: string; state: string } | undefined {
  const match = /(http:\/\/(?:127\.0\.0\.1|localhost):\d+\/auth\?state=([A-Za-z0-9_-]+))/.exec(line);
  return match ? { url: match[1]!, state: match[2]! } : undefined;
}

/**
 * The token JSON between `Paste the following into your remote machine --->` and
 * `<---End paste`. rclone prints base64 of `{"token": ...}` instead when it was given a
 * config blob; both are accepted. Undefined when there is no usable token.
 */
export function parseAuthorizeToken(stdout: string): string | undefined {
  const match = /--->\s*\n([\s\S]*?)\n\s*<---End paste/.exec(stdout);
  const body = match?.[1]?.trim();
  if (!body) return undefined;
  const direct = tokenJson(body);
  if (direct) return direct;
  try {
    const wrapped = JSON.parse(Buffer.from(body, 'base64').toString('utf8')) as { token?: unknown };
    return typeof wrapped.token === 'string' ? tokenJson(wrapped.token) : undefined;
  } catch {
    return undefined;
  }
}

function tokenJson(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as { access_token?: unknown };
    return typeof value.access_token === 'string' && value.access_token !== '' ? JSON.stringify(value) : undefined;
  } catch {
    return undefined;
  }
}

/** One step of rclone's config state machine (`config create|update --non-interactive`). */
export interface ConfigQuestion {
  /** Empty when configuration is complete. */
  state: string;
  error: string;
  option: string | undefined;
  /** The answer rclone proposes (the option's default). */
  answer: string;
}

export function parseConfigQuestion(stdout: string): ConfigQuestion | undefined {
  let value: { State?: unknown; Error?: unknown; Option?: { Name?: unknown; Default?: unknown; DefaultStr?: unknown } | null };
  try {
    value = JSON.parse(stdout.slice(stdout.indexOf('{')));
  } catch {
    return undefined;
  }
  if (typeof value.State !== 'string') return undefined;
  const option = value.Option ?? undefined;
  return {
    state: value.State,
    error: typeof value.Error === 'string' ? value.Error : '',
    option: typeof option?.Name === 'string' ? option.Name : undefined,
    answer: typeof option?.DefaultStr === 'string' ? option.DefaultStr : option?.Default === undefined || option.Default === null ? '' : String(option.Default),
  };
}

/**
 * The line that explains a failed run: rclone's `Fatal error:` or `ERROR :` line, else its
 * last log line, without the date prefix. Never stdout, which can hold a token.
 */
export function failureLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\s+/, '').trim())
    .filter((l) => l !== '' && !/^(Usage:|Flags:|Use "rclone)/.test(l));
  const fatal = lines.findLast((l) => /^(Fatal error:|ERROR\s*:|Error:|CRITICAL)/.test(l));
  const line = fatal ?? lines.at(-1) ?? 'the sync tool failed without a message';
  return line.length > 500 ? `${line.slice(0, 500)}...` : line;
}

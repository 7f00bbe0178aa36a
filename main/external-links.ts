/**
 * Which pages the app may open in the system browser. Only https, only these hosts: the
 * OAuth and device-login pages of the providers the bootstrap flows and connectors use.
 */
export const EXTERNAL_HOSTS: readonly string[] = [
  'github.com',
  'claude.ai',
  'claude.com',
  'platform.claude.com',
  'console.anthropic.com',
  'auth.openai.com',
  'accounts.google.com',
  'login.microsoftonline.com',
];

export function isSafeExternalUrl(url: string, hosts: readonly string[] = EXTERNAL_HOSTS): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && !parsed.username && !parsed.password && hosts.includes(parsed.hostname.toLowerCase());
  } catch {
    return false;
  }
}

/** `scheme://host[:port]` of a URL, or undefined when it has none. */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return undefined;
  }
}

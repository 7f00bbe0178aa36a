import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * codex's credential file, $CODEX_HOME/auth.json (research: clib-protocol §11):
 * `{auth_mode: "chatgpt", tokens: {id_token, access_token, refresh_token, ...}, last_refresh}`
 * after the device login, `{auth_mode: "apikey", OPENAI_API_KEY}` after an API-key login.
 * JWT claims are read, never verified: codex itself does the same, and nothing here trusts them.
 */
export interface CodexAuth {
  mode: 'chatgpt' | 'api_key';
  /** When the access token runs out (codex renews it with the refresh token). */
  expiresAt?: string;
  /** The ChatGPT plan claim of the id token. */
  plan?: string;
}

export function codexAuthFile(codexHome: string): string {
  return path.join(codexHome, 'auth.json');
}

/** The usable credential in `auth.json`, or undefined when there is none (or it is unreadable). */
export async function readCodexAuth(codexHome: string): Promise<CodexAuth | undefined> {
  let auth: Record<string, any>;
  try {
    auth = JSON.parse(await readFile(codexAuthFile(codexHome), 'utf8'));
  } catch {
    return undefined;
  }
  return parseCodexAuth(auth);
}

export function parseCodexAuth(auth: unknown): CodexAuth | undefined {
  if (typeof auth !== 'object' || auth === null) return undefined;
  const a = auth as { auth_mode?: unknown; OPENAI_API_KEY?: unknown; tokens?: Record<string, unknown> };
  if (a.auth_mode === 'apikey' && typeof a.OPENAI_API_KEY === 'string' && a.OPENAI_API_KEY !== '') return { mode: 'api_key' };
  const tokens = a.tokens;
  if (a.auth_mode !== 'chatgpt' || typeof tokens !== 'object' || tokens === null) return undefined;
  if (typeof tokens.refresh_token !== 'string' && typeof tokens.access_token !== 'string') return undefined;
  const access = jwtClaims(tokens.access_token);
  const id = jwtClaims(tokens.id_token);
  const exp = typeof access?.exp === 'number' ? access.exp : typeof id?.exp === 'number' ? id.exp : undefined;
  const plan = (id?.['https://api.openai.com/auth'] as { chatgpt_plan_type?: unknown } | undefined)?.chatgpt_plan_type;
  return {
    mode: 'chatgpt',
    ...(exp !== undefined && Number.isFinite(exp) ? { expiresAt: new Date(exp * 1000).toISOString() } : {}),
    ...(typeof plan === 'string' ? { plan } : {}),
  };
}

function jwtClaims(jwt: unknown): Record<string, unknown> | undefined {
  if (typeof jwt !== 'string') return undefined;
  try {
    const claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null ? claims : undefined;
  } catch {
    return undefined;
  }
}

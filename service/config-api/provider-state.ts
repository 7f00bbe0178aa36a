import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AuthState } from '../auth/state.js';
import type { Config } from '../config.js';
import type { EnvEntry } from '../stores/env-file.js';
import { RegistryStore } from '../stores/registry.js';
import { maskSecret } from './mask.js';

/** The provider state objects of the spec: booleans and masks, never a secret. */

/** The effective value of each key (the last line of a key wins, as in dotenv). */
export function effectiveEnv(entries: readonly EnvEntry[]): Map<string, string> {
  return new Map(entries.map((e) => [e.key, e.value]));
}

/** GET /api/config/api-key: the first provider's key (PROVA_API_KEY). */
export function apiKeyState(env: Map<string, string>): { provider: string; key_set: boolean; masked: string } {
  const value = env.get('PROVA_API_KEY') ?? '';
  return { provider: 'prova', key_set: value !== '', masked: maskSecret(value) };
}

/**
 * GET /api/config/provb-subscription. The clib device login stores ChatGPT tokens (not an API
 * key) in codex's auth.json; its id_token names the plan. Only the plan claim is read.
 */
export async function provbSubscription(home: string): Promise<{ has_subscription: boolean; plan?: string }> {
  let auth: { auth_mode?: unknown; tokens?: { id_token?: unknown } };
  try {
    auth = JSON.parse(await readFile(path.join(home, '.codex', 'auth.json'), 'utf8'));
  } catch {
    return { has_subscription: false };
  }
  if (auth?.auth_mode !== 'chatgpt' || typeof auth.tokens?.id_token !== 'string') return { has_subscription: false };
  const plan = planClaim(auth.tokens.id_token);
  return plan ? { has_subscription: true, plan } : { has_subscription: true };
}

function planClaim(jwt: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const plan = payload?.['https://api.openai.com/auth']?.chatgpt_plan_type;
    return typeof plan === 'string' ? plan : undefined;
  } catch {
    return undefined;
  }
}

/** GET /api/config/hosted-account: the upstream sign-in (in memory), or SPACE_API_KEY. */
export function hostedAccount(auth: AuthState): { connected: boolean; account?: { user_id: string } } {
  const state = auth.sanitized();
  if (state.user_id) return { connected: true, account: { user_id: state.user_id } };
  return { connected: state.source !== 'none' };
}

/**
 * GET /api/config/local: whether the active agent's model is served by the local model
 * server (`ollama/<model>` or `localmodel/<model>`).
 */
export async function localState(config: Config): Promise<{ is_local: boolean; provider?: string }> {
  if (!config.activeAgentId) return { is_local: false };
  const agent = await new RegistryStore(config.paths.registryFile).find(config.activeAgentId);
  const model = typeof agent?.model === 'string' ? agent.model : '';
  return /^(ollama|localmodel)\//.test(model) ? { is_local: true, provider: 'localmodel' } : { is_local: false };
}

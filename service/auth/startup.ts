import type { Core } from '../core.js';
import type { SignIn } from './sign-in.js';

/**
 * SPACE_AUTH_SESSION_ID + SPACE_POLL_TOKEN: the shell that launched the service already ran
 * the upstream start and hands the flow over. Consume it once, before listening; a failure
 * is logged (never the token) and the service starts signed out. Both variables are then
 * removed from process.env so no child can inherit them.
 */
export async function consumeAtStartup(deps: Core & { signIn: SignIn }): Promise<void> {
  const { authSessionId, pollToken, apiKey } = deps.config;
  try {
    if (!authSessionId || !pollToken) return;
    if (apiKey) {
      deps.log.info('SPACE_API_KEY is set: the start-up sign-in is not used');
      return;
    }
    const { user_id } = await deps.signIn.consume(authSessionId, pollToken);
    deps.log.info({ user_id }, 'signed in at start-up');
  } catch (err) {
    deps.log.warn({ reason: (err as Error).message }, 'start-up sign-in failed; starting signed out');
  } finally {
    delete process.env.SPACE_AUTH_SESSION_ID;
    delete process.env.SPACE_POLL_TOKEN;
  }
}

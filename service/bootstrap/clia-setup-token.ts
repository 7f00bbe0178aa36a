import { randomUUID } from 'node:crypto';
import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import type { OwnedPty } from '../process/supervisor.js';
import { activeEnvStore } from '../secrets/active-env.js';
import { cliEnv } from './cli-env.js';
import { seconds, Transcript } from './transcript.js';
import { findAuthorizeUrl, findOAuthError, findOAuthToken, isRefusedCode, lastLine } from './setup-token-screen.js';

/**
 * POST /clia/setup-token and its callback: the real `claude setup-token`, which needs a
 * terminal, on a pty owned by the supervisor. start() reads the sign-in link off the screen;
 * callback() types the user's `code#state` into the same terminal, waits for the token and
 * writes CLIA_CODE_OAUTH_TOKEN into the active env file. However a flow ends (token, CLI
 * error, timeout, expiry, shutdown), its process group is stopped.
 */
export const CLIA_TOKEN_KEY = 'CLIA_CODE_OAUTH_TOKEN';

interface Session {
  id: string;
  owned: OwnedPty;
  screen: Transcript;
  busy: boolean;
  expiry: NodeJS.Timeout;
}

/** Wide enough that neither the link nor the token is wrapped by the UI. */
const COLUMNS = 500;

export class CliaSetupToken {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly core: Core) {}

  async start(): Promise<{ authorize_url: string; session_id: string }> {
    // One flow at a time: a new start replaces an abandoned one.
    await Promise.all([...this.sessions.values()].map((s) => this.end(s)));
    const owned = this.spawn();
    const session: Session = { id: randomUUID(), owned, screen: new Transcript(), busy: false, expiry: setTimeout(() => void this.end(session), this.core.config.bootstrapSessionTtlMs) };
    session.expiry.unref();
    owned.pty.onData((chunk) => session.screen.append(chunk));
    this.sessions.set(session.id, session);
    try {
      const authorize_url = await session.screen.waitFor(findAuthorizeUrl, {
        exited: owned.exited,
        timeoutMs: this.core.config.bootstrapStepTimeoutMs,
        onExit: () => new HttpError(502, `claude setup-token exited before showing a sign-in link: ${lastLine(session.screen.value) || 'no output'}`),
        timeoutDetail: `claude setup-token did not show a sign-in link within ${seconds(this.core.config.bootstrapStepTimeoutMs)}`,
      });
      this.core.log.info({ pid: owned.pid }, 'clia setup-token waiting for the code');
      return { authorize_url, session_id: session.id };
    } catch (err) {
      await this.end(session);
      throw err;
    }
  }

  async callback(sessionId: string, code: string): Promise<{ ok: true }> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new HttpError(404, 'Unknown or expired setup session; start again with POST /clia/setup-token');
    if (session.busy) throw new HttpError(409, 'A code for this setup session is already being checked');
    session.busy = true;
    try {
      const from = session.screen.length;
      await typeInto(session.owned, code);
      const outcome = await session.screen.waitFor((text) => tokenOrError(text.slice(from)), {
        exited: session.owned.exited,
        timeoutMs: this.core.config.bootstrapStepTimeoutMs,
        onExit: () => new HttpError(502, `claude setup-token exited without a token: ${lastLine(session.screen.value.slice(from)) || 'no output'}`),
        timeoutDetail: `claude setup-token did not answer the code within ${seconds(this.core.config.bootstrapStepTimeoutMs)}`,
      });
      if ('error' in outcome) throw new HttpError(isRefusedCode(outcome.error) ? 400 : 502, `claude setup-token: ${outcome.error}`);
      const store = await activeEnvStore(this.core.config);
      await store.upsert([{ key: CLIA_TOKEN_KEY, value: outcome.token }]);
      this.core.log.info({ env_file: store.file }, 'clia token saved');
      return { ok: true };
    } finally {
      await this.end(session);
    }
  }

  private spawn(): OwnedPty {
    const { config } = this.core;
    // The full link (not the shortened one) is the manual flow, whose callback page shows
    // `code#state`; BROWSER=true keeps the CLI from opening a browser of its own.
    const env = cliEnv(config, { TERM: 'xterm-256color', CLAUDE_CODE_FULL_SIGN_IN_LINK: '1', BROWSER: 'true', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' });
    try {
      return this.core.supervisor.spawnPty({ command: config.bins.clia, args: ['setup-token'], env, cwd: config.home, cols: COLUMNS, rows: 50 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new HttpError(503, `The clia CLI "${config.bins.clia}" was not found on PATH (set SPACE_CLIA_BIN)`);
      if (code === 'EPTY') throw new HttpError(503, `No terminal for claude setup-token: ${(err as Error).message}`);
      throw err;
    }
  }

  private async end(session: Session): Promise<void> {
    clearTimeout(session.expiry);
    this.sessions.delete(session.id);
    await session.owned.stop(1000);
  }
}

function tokenOrError(text: string): { token: string } | { error: string } | undefined {
  const token = findOAuthToken(text);
  if (token) return { token };
  const error = findOAuthError(text);
  return error ? { error } : undefined;
}

/** Types the code, then Enter on its own, as a person pasting and pressing Enter would. */
async function typeInto(owned: OwnedPty, code: string): Promise<void> {
  try {
    owned.pty.write(code);
    await new Promise((resolve) => setTimeout(resolve, 150));
    owned.pty.write('\r');
  } catch {
    // The CLI is gone; the wait that follows reports its exit.
  }
}

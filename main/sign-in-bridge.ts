import type { IpcMain } from 'electron';
import type { SignIn } from '../service/auth/sign-in.js';
import { assertAppFrame, bridgeError } from './ipc-guard.js';

/**
 * The renderer's sign-in: start, wait for approval, consume. The service started in this
 * process holds the upstream poll_token and consumes with it (SignIn.consumeHeld), so the
 * token never crosses IPC and the renderer only ever sees the authorize URL, the session
 * id, the status and the user id.
 */
export interface SignInBridgeDeps {
  signIn: Pick<SignIn, 'start' | 'waitForApproval' | 'consumeHeld'>;
  /** Opens the sign-in page in the system browser. */
  openExternal(url: string): void;
  /** Upstream status poll interval (spec: 2 s). */
  pollIntervalMs?: number;
}

export const SIGN_IN_CHANNELS = { start: 'space:sign-in:start', wait: 'space:sign-in:wait', consume: 'space:sign-in:consume' } as const;

export function registerSignInBridge(ipcMain: Pick<IpcMain, 'handle'>, appOrigin: string, deps: SignInBridgeDeps): void {
  ipcMain.handle(SIGN_IN_CHANNELS.start, async (event) => {
    assertAppFrame(event, appOrigin);
    const { authorize_url, auth_session_id } = await bridgeError(deps.signIn.start());
    if (isSignInPage(authorize_url)) deps.openExternal(authorize_url);
    return { authorize_url, auth_session_id };
  });
  ipcMain.handle(SIGN_IN_CHANNELS.wait, async (event, authSessionId: unknown) => {
    assertAppFrame(event, appOrigin);
    const { status } = await bridgeError(deps.signIn.waitForApproval(sessionId(authSessionId), { intervalMs: deps.pollIntervalMs ?? 2000 }));
    return { status };
  });
  ipcMain.handle(SIGN_IN_CHANNELS.consume, async (event, authSessionId: unknown) => {
    assertAppFrame(event, appOrigin);
    const { ok, user_id } = await bridgeError(deps.signIn.consumeHeld(sessionId(authSessionId)));
    return { ok, user_id };
  });
}

function sessionId(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > 200) throw new Error('auth_session_id must be a non-empty string');
  return value;
}

/** https, or http on loopback (a local upstream in development): nothing else is opened. */
export function isSignInPage(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) return false;
    if (parsed.protocol === 'https:') return true;
    return parsed.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
  } catch {
    return false;
  }
}

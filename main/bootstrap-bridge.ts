import type { IpcMain } from 'electron';
import { isSafeExternalUrl, originOf } from './external-links.js';
import { assertAppFrame, bridgeError } from './ipc-guard.js';
import type { ServiceClient } from './service-client.js';

/**
 * The runtime bootstrap flows for the renderer: clia's setup-token (start, then the
 * `code#state` the sign-in page shows) and clib's device login (start, status, cancel, or an
 * API key). The flows run in the service; this bridge calls its routes in-process with the
 * launch token, opens the sign-in page in the system browser (allow-listed https hosts, or
 * the configured clib issuer), and answers only the app's own top frame.
 */
export const BOOTSTRAP_CHANNELS = {
  cliaStart: 'space:clia:start',
  cliaCode: 'space:clia:code',
  clibStart: 'space:clib:start',
  clibStatus: 'space:clib:status',
  clibCancel: 'space:clib:cancel',
  clibApiKey: 'space:clib:api-key',
} as const;

export interface BootstrapBridgeDeps {
  service: ServiceClient;
  openExternal(url: string): void;
  /** SPACE_CLIB_ISSUER: its device page may be opened too (self-hosted issuers, tests). */
  clibIssuer?: string | undefined;
}

interface ClibAnswer {
  status: string;
  verification_url?: string;
}

export function registerBootstrapBridge(ipcMain: Pick<IpcMain, 'handle'>, appOrigin: string, deps: BootstrapBridgeDeps): void {
  const issuerOrigin = deps.clibIssuer ? originOf(deps.clibIssuer) : undefined;
  const open = (url: unknown): void => {
    if (typeof url !== 'string') return;
    if (isSafeExternalUrl(url) || (issuerOrigin !== undefined && originOf(url) === issuerOrigin)) deps.openExternal(url);
  };
  const handle = (channel: string, fn: (...args: unknown[]) => Promise<unknown>): void => {
    ipcMain.handle(channel, async (event, ...args: unknown[]) => {
      assertAppFrame(event, appOrigin);
      return bridgeError(fn(...args));
    });
  };

  handle(BOOTSTRAP_CHANNELS.cliaStart, async () => {
    const started = (await deps.service.post('/clia/setup-token')) as { authorize_url: string; session_id: string };
    open(started.authorize_url);
    return started;
  });
  handle(BOOTSTRAP_CHANNELS.cliaCode, (sessionId, code) =>
    deps.service.post('/clia/setup-token/callback', { session_id: text(sessionId, 'session_id', 100), code: text(code, 'code', 4096) }),
  );
  handle(BOOTSTRAP_CHANNELS.clibStart, async () => {
    const answer = (await deps.service.post('/clib/setup')) as ClibAnswer;
    if (answer.status === 'pending') open(answer.verification_url);
    return answer;
  });
  handle(BOOTSTRAP_CHANNELS.clibStatus, () => deps.service.get('/clib/setup/status'));
  handle(BOOTSTRAP_CHANNELS.clibCancel, () => deps.service.post('/clib/setup/cancel'));
  handle(BOOTSTRAP_CHANNELS.clibApiKey, (key) => deps.service.post('/clib/setup', { api_key: text(key, 'api_key', 4096) }));
}

/** A bridge argument must be a non-empty string of bounded size; the service checks the rest. */
function text(value: unknown, name: string, max: number): string {
  if (typeof value !== 'string' || value === '' || value.length > max) throw new Error(`${name} must be a non-empty string`);
  return value;
}

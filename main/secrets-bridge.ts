import type { IpcMain } from 'electron';
import type { Config } from '../service/config.js';
import { readEnvSecrets, writeEnvSecrets } from '../service/secrets/env-secrets.js';
import { assertAppFrame, bridgeError } from './ipc-guard.js';

/**
 * The active env file's secrets for the renderer, over IPC instead of HTTP: only the app's
 * own top frame is answered, and writes go through the same validation and structured
 * replace as PUT /api/secrets/env.
 */
export const SECRETS_CHANNELS = { read: 'space:secrets:read', write: 'space:secrets:write' } as const;

export function registerSecretsBridge(ipcMain: Pick<IpcMain, 'handle'>, appOrigin: string, config: Config): void {
  ipcMain.handle(SECRETS_CHANNELS.read, async (event) => {
    assertAppFrame(event, appOrigin);
    return bridgeError(readEnvSecrets(config));
  });
  ipcMain.handle(SECRETS_CHANNELS.write, async (event, body: unknown) => {
    assertAppFrame(event, appOrigin);
    return bridgeError(writeEnvSecrets(config, body));
  });
}

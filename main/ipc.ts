import type { IpcMain } from 'electron';
import type { Config } from '../service/config.js';
import type { SignIn } from '../service/auth/sign-in.js';
import { registerBootstrapBridge } from './bootstrap-bridge.js';
import { assertAppFrame } from './ipc-guard.js';
import { registerSecretsBridge } from './secrets-bridge.js';
import type { ServiceClient } from './service-client.js';
import { registerSignInBridge } from './sign-in-bridge.js';

/** What the preload may ask the main process; every handler checks the calling frame. */
export interface RendererInfo {
  apiBase: string;
  version: string;
}

/** The in-process service parts the bridges use. */
export interface BridgeServices {
  config: Config;
  signIn: Pick<SignIn, 'start' | 'waitForApproval' | 'consumeHeld'>;
  /** The service's routes, called with the launch token (the bootstrap flows). */
  service: ServiceClient;
  openExternal(url: string): void;
  pollIntervalMs?: number;
}

export function registerIpc(ipcMain: Pick<IpcMain, 'handle'>, appOrigin: string, info: RendererInfo, services?: BridgeServices): void {
  ipcMain.handle('space:info', (event) => {
    assertAppFrame(event, appOrigin);
    return info;
  });
  if (!services) return;
  registerSignInBridge(ipcMain, appOrigin, services);
  registerSecretsBridge(ipcMain, appOrigin, services.config);
  registerBootstrapBridge(ipcMain, appOrigin, { service: services.service, openExternal: services.openExternal, clibIssuer: services.config.clibIssuer });
}

export { assertAppFrame };

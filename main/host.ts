import type { App, BrowserWindow, Dialog } from 'electron';
import type { AppUpdater } from 'electron-updater';
import type { Host } from '../service/host.js';

/**
 * The Electron side of the host seam. Everything Electron is injected as this small
 * surface, so the host is unit-tested with fakes and the service never imports Electron.
 */
export interface ElectronSurface {
  app: Pick<App, 'relaunch' | 'quit'>;
  dialog: Pick<Dialog, 'showMessageBox'>;
  updater: Pick<AppUpdater, 'checkForUpdates' | 'downloadUpdate' | 'quitAndInstall'>;
  /** The window a confirmation dialog is attached to, if one is open. */
  window(): BrowserWindow | undefined;
}

export interface ElectronHostOptions {
  token: string;
  /** Origins of the window's pages besides the service's own (SPACE_RENDERER_URL's). */
  rendererOrigins: readonly string[];
  log?: (message: string) => void;
}

const CONFIRM_BUTTON = 1;

export function createElectronHost(surface: ElectronSurface, options: ElectronHostOptions): Host {
  const log = options.log ?? (() => undefined);
  return {
    kind: 'electron',
    token: options.token,
    rendererOrigins: options.rendererOrigins,
    async confirm({ title, message }) {
      const box = {
        type: 'warning' as const,
        title,
        message: title,
        detail: message,
        buttons: ['Cancel', 'Continue'],
        defaultId: 0,
        cancelId: 0,
        noLink: true,
      };
      const win = surface.window();
      const { response } = win ? await surface.dialog.showMessageBox(win, box) : await surface.dialog.showMessageBox(box);
      return response === CONFIRM_BUTTON;
    },
    async relaunch() {
      // quit (not exit) so before-quit runs and the service shuts down cleanly first.
      surface.app.relaunch();
      surface.app.quit();
    },
    async update() {
      const result = await surface.updater.checkForUpdates();
      if (!result?.isUpdateAvailable) {
        log('no update available');
        return;
      }
      // electron-updater verifies the download's signature before it installs it.
      await surface.updater.downloadUpdate();
      surface.updater.quitAndInstall();
    },
  };
}

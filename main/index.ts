import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, protocol, session, shell } from 'electron';
import Store from 'electron-store';
import electronUpdater from 'electron-updater';
import { loadConfig, safeOrigin } from '../service/config.js';
import { createService, type Service } from '../service/index.js';
import { createLogger } from '../service/log.js';
import { boundHeapGrowth } from '../service/process/heap.js';
import { enforceCsp } from './csp.js';
import { createElectronHost } from './host.js';
import { registerIpc } from './ipc.js';
import { closeServiceBeforeQuit } from './quit.js';
import { APP_SCHEME, serveRenderer } from './renderer-protocol.js';
import { rendererTarget, type RendererTarget } from './renderer-target.js';
import { serviceClient } from './service-client.js';
import { claimSingleInstance } from './single-instance.js';
import { injectToken, newLaunchToken } from './token.js';
import { lockNavigation, windowOptions } from './window.js';

/**
 * The Electron main process: one instance, the service in-process on loopback, one
 * locked-down window. Everything here is wiring; the logic lives in the modules it calls.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const { autoUpdater } = electronUpdater;

protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } }]);

let mainWindow: BrowserWindow | undefined;
/** Window placement between launches; the only state the host itself keeps. */
const windowState = new Store<{ bounds?: Electron.Rectangle }>({ name: 'window-state' });
let service: Service | undefined;

// SIGINT/SIGTERM need no handler here: Electron turns them into a normal quit, which
// before-quit holds until the service is closed.
if (claimSingleInstance(app, () => mainWindow)) {
  closeServiceBeforeQuit(app, () => service, { log: (m) => console.error(m) });
  app.whenReady().then(start, (err: unknown) => fail(String(err)));
}

async function start(): Promise<void> {
  const config = loadConfig(process.env);
  boundHeapGrowth(config.heapGrowingPercent);
  // The poll token is consumed by the service at start-up (which then removes both sign-in
  // variables); delete it at once so nothing started before that can inherit it.
  delete process.env.SPACE_POLL_TOKEN;
  const log = createLogger(config.logLevel);
  const token = newLaunchToken();
  autoUpdater.autoDownload = false;
  autoUpdater.autoInstallOnAppQuit = false;
  const rendererOrigin = config.rendererUrl ? safeOrigin(config.rendererUrl) : undefined;
  const host = createElectronHost(
    { app, dialog, updater: autoUpdater, window: () => mainWindow },
    { token, rendererOrigins: rendererOrigin ? [rendererOrigin] : [], log: (m) => log.info(m) },
  );
  service = createService({ config, host, log });
  let apiBase: string;
  try {
    apiBase = (await service.listen()).url;
  } catch (err) {
    return fail(`The Space service could not start on ${config.host}:${config.port}: ${(err as Error).message}`);
  }
  const target = rendererTarget(config.rendererUrl, apiBase);
  // The renderer never holds the token: the session adds it to requests to the service.
  injectToken(session.defaultSession, apiBase, token);
  enforceCsp(session.defaultSession, target.origin);
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  protocol.handle(APP_SCHEME, (request) => serveRenderer(request, path.join(config.paths.appRoot, 'renderer')));
  // The sign-in and secrets bridges call the in-process service: the poll_token stays in
  // this process and secrets never travel through a renderer-visible HTTP header.
  registerIpc(
    ipcMain,
    target.origin,
    { apiBase, version: app.getVersion() },
    { config, signIn: service.ctx.signIn, service: serviceClient(apiBase, token), openExternal: (url) => void shell.openExternal(url) },
  );
  openWindow(target);
  app.on('activate', () => {
    if (!mainWindow) openWindow(target);
  });
}

function openWindow(target: RendererTarget): void {
  mainWindow = new BrowserWindow({ ...windowOptions(path.join(here, '..', 'preload', 'index.cjs')), ...windowState.get('bounds') });
  lockNavigation(mainWindow.webContents, { appOrigin: target.origin, openExternal: (url) => void shell.openExternal(url) });
  mainWindow.once('ready-to-show', () => mainWindow?.show());
  mainWindow.on('close', () => windowState.set('bounds', mainWindow?.getBounds()));
  mainWindow.on('closed', () => (mainWindow = undefined));
  void mainWindow.loadURL(target.url);
}

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

function fail(message: string): void {
  dialog.showErrorBox('Space', message);
  app.exit(1);
}

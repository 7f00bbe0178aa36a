import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, protocol, session, shell } from 'electron';
import Store from 'electron-store';
import electronUpdater from 'electron-updater';
import { loadConfig } from '../service/config.js';
import { createService, type Service } from '../service/index.js';
import { createLogger } from '../service/log.js';
import { createElectronHost } from './host.js';
import { registerIpc } from './ipc.js';
import { APP_ORIGIN, APP_SCHEME, serveRenderer } from './renderer-protocol.js';
import { injectToken, newLaunchToken } from './token.js';
import { lockNavigation, windowOptions } from './window.js';

/**
 * The Electron main process: one instance, the service in-process on loopback, one
 * locked-down window. Everything here is wiring; the logic lives in the modules it calls.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const { autoUpdater } = electronUpdater;
/** Hosts the renderer may send the user to in the system browser (OAuth and device pages). */
const EXTERNAL_HOSTS = ['github.com', 'claude.ai', 'console.anthropic.com', 'auth.openai.com', 'accounts.google.com', 'login.microsoftonline.com'];

protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } }]);

let mainWindow: BrowserWindow | undefined;
/** Window placement between launches; the only state the host itself keeps. */
const windowState = new Store<{ bounds?: Electron.Rectangle }>({ name: 'window-state' });
let service: Service | undefined;

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (mainWindow?.isMinimized()) mainWindow.restore();
    mainWindow?.focus();
  });
  app.whenReady().then(start, (err: unknown) => fail(String(err)));
}

async function start(): Promise<void> {
  const config = loadConfig(process.env);
  // The poll token is consumed by the service at start-up (which then removes both sign-in
  // variables); delete it at once so nothing started before that can inherit it.
  delete process.env.SPACE_POLL_TOKEN;
  const log = createLogger(config.logLevel);
  const token = newLaunchToken();
  autoUpdater.autoDownload = false;
  const host = createElectronHost(
    { app, dialog, updater: autoUpdater, window: () => mainWindow },
    { token, rendererOrigin: APP_ORIGIN, log: (m) => log.info(m) },
  );
  service = createService({ config, host, log });
  let apiBase: string;
  try {
    apiBase = (await service.listen()).url;
  } catch (err) {
    return fail(`The Space service could not start on ${config.host}:${config.port}: ${(err as Error).message}`);
  }
  injectToken(session.defaultSession, apiBase, token);
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  protocol.handle(APP_SCHEME, (request) => serveRenderer(request, path.join(config.paths.appRoot, 'renderer')));
  // The sign-in and secrets bridges call the in-process service: the poll_token stays in
  // this process and secrets never travel through a renderer-visible HTTP header.
  registerIpc(
    ipcMain,
    APP_ORIGIN,
    { apiBase, version: app.getVersion() },
    { config, signIn: service.ctx.signIn, openExternal: (url) => void shell.openExternal(url) },
  );
  openWindow();
}

function openWindow(): void {
  mainWindow = new BrowserWindow({ ...windowOptions(path.join(here, '..', 'preload', 'index.cjs')), ...windowState.get('bounds') });
  lockNavigation(mainWindow.webContents, { appOrigin: APP_ORIGIN, externalHosts: EXTERNAL_HOSTS, openExternal: (url) => void shell.openExternal(url) });
  mainWindow.once('ready-to-show', () => mainWindow?.show());
  mainWindow.on('close', () => windowState.set('bounds', mainWindow?.getBounds()));
  mainWindow.on('closed', () => (mainWindow = undefined));
  void mainWindow.loadURL(`${APP_ORIGIN}/index.html`);
}

let quitting = false;
app.on('before-quit', (event) => {
  if (quitting || !service) return;
  // Hold the quit until every turn's process group is gone and writes are flushed.
  event.preventDefault();
  quitting = true;
  void service.close().finally(() => app.quit());
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

app.on('activate', () => {
  if (!mainWindow && service) openWindow();
});

function fail(message: string): void {
  dialog.showErrorBox('Space', message);
  app.exit(1);
}

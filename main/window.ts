import type { BrowserWindowConstructorOptions, WebContents } from 'electron';
import { isSafeExternalUrl, originOf } from './external-links.js';

/**
 * The renderer's lockdown: no Node, an isolated and sandboxed preload, no navigation away
 * from the app's origin, no new windows. Links that must leave the app (OAuth pages) go to
 * the system browser, and only over https to hosts on the allow-list.
 */
export function windowOptions(preloadPath: string): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 840,
    show: false,
    title: 'Space',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  };
}

export interface NavigationPolicy {
  appOrigin: string;
  externalHosts?: readonly string[];
  openExternal(url: string): void;
}

export function lockNavigation(contents: Pick<WebContents, 'on' | 'setWindowOpenHandler'>, policy: NavigationPolicy): void {
  const leaveApp = (url: string): void => {
    if (isSafeExternalUrl(url, policy.externalHosts)) policy.openExternal(url);
  };
  const stayInApp = (event: { preventDefault(): void }, url: string): void => {
    if (originOf(url) === policy.appOrigin) return;
    event.preventDefault();
    leaveApp(url);
  };
  contents.on('will-navigate', stayInApp);
  contents.on('will-redirect', stayInApp);
  contents.setWindowOpenHandler(({ url }) => {
    leaveApp(url);
    return { action: 'deny' };
  });
}

export { isSafeExternalUrl };

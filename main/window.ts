import type { BrowserWindowConstructorOptions, WebContents } from 'electron';

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
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  };
}

export interface NavigationPolicy {
  appOrigin: string;
  externalHosts: readonly string[];
  openExternal(url: string): void;
}

export function lockNavigation(contents: Pick<WebContents, 'on' | 'setWindowOpenHandler'>, policy: NavigationPolicy): void {
  contents.on('will-navigate', (event, url) => {
    if (!sameOrigin(url, policy.appOrigin)) event.preventDefault();
  });
  contents.setWindowOpenHandler(({ url }) => {
    if (isSafeExternalUrl(url, policy.externalHosts)) policy.openExternal(url);
    return { action: 'deny' };
  });
}

export function isSafeExternalUrl(url: string, hosts: readonly string[]): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && !parsed.username && hosts.includes(parsed.hostname.toLowerCase());
  } catch {
    return false;
  }
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}` === origin;
  } catch {
    return false;
  }
}

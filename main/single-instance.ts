import type { App, BrowserWindow } from 'electron';

export type FocusableWindow = Pick<BrowserWindow, 'isMinimized' | 'restore' | 'isVisible' | 'show' | 'focus'>;

/**
 * One running app per user: a second launch quits at once and the first one's window comes
 * to the front. Returns whether this process holds the lock (and should go on starting).
 */
export function claimSingleInstance(app: Pick<App, 'requestSingleInstanceLock' | 'quit' | 'on'>, window: () => FocusableWindow | undefined): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', () => bringToFront(window()));
  return true;
}

/** Restores, shows and focuses the window; nothing when none is open yet (still starting). */
export function bringToFront(win: FocusableWindow | undefined): void {
  if (!win) return;
  if (win.isMinimized()) win.restore();
  if (!win.isVisible()) win.show();
  win.focus();
}

import type { IpcMain, IpcMainInvokeEvent } from 'electron';

/** What the preload may ask the main process; every handler checks the calling frame. */
export interface RendererInfo {
  apiBase: string;
  version: string;
}

export function registerIpc(ipcMain: Pick<IpcMain, 'handle'>, appOrigin: string, info: RendererInfo): void {
  ipcMain.handle('space:info', (event) => {
    assertAppFrame(event, appOrigin);
    return info;
  });
}

export function assertAppFrame(event: Pick<IpcMainInvokeEvent, 'senderFrame'>, appOrigin: string): void {
  const url = event.senderFrame?.url;
  let origin: string | undefined;
  try {
    const parsed = new URL(url ?? '');
    origin = `${parsed.protocol}//${parsed.host}`;
  } catch {
    origin = undefined;
  }
  if (origin !== appOrigin) throw new Error('IPC refused: not the app frame');
}

import electron = require('electron');

const { contextBridge, ipcRenderer } = electron;

/**
 * The renderer's only door to the main process. It exposes functions, never ipcRenderer
 * itself, and no secret: the launch token is added to requests by the main process, and
 * the sign-in poll token never leaves it.
 */
const api = {
  info: (): Promise<{ apiBase: string; version: string }> => ipcRenderer.invoke('space:info'),
};

contextBridge.exposeInMainWorld('space', api);

export type SpaceBridge = typeof api;

import electron = require('electron');

const { contextBridge, ipcRenderer } = electron;

/**
 * The renderer's only door to the main process. It exposes functions, never ipcRenderer
 * itself, and no secret: the launch token is added to requests by the main process, and
 * the sign-in poll token never leaves it. Channel names match main/ (sandboxed preloads
 * cannot import them; test/main/bridge.test.ts checks they agree).
 */
interface EnvEntry {
  key: string;
  value: string;
}

const api = {
  info: (): Promise<{ apiBase: string; version: string }> => ipcRenderer.invoke('space:info'),
  signIn: {
    /** Starts the upstream sign-in and opens its page in the system browser. */
    start: (): Promise<{ authorize_url: string; auth_session_id: string }> => ipcRenderer.invoke('space:sign-in:start'),
    /** Resolves once the sign-in is no longer pending (the main process polls every 2 s). */
    waitForApproval: (authSessionId: string): Promise<{ status: 'pending' | 'approved' | 'expired' }> =>
      ipcRenderer.invoke('space:sign-in:wait', authSessionId),
    consume: (authSessionId: string): Promise<{ ok: true; user_id: string }> => ipcRenderer.invoke('space:sign-in:consume', authSessionId),
  },
  secrets: {
    read: (): Promise<{ entries: EnvEntry[] }> => ipcRenderer.invoke('space:secrets:read'),
    write: (entries: EnvEntry[]): Promise<{ ok: true }> => ipcRenderer.invoke('space:secrets:write', { entries }),
  },
};

contextBridge.exposeInMainWorld('space', api);

export type SpaceBridge = typeof api;

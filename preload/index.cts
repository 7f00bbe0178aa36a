import electron = require('electron');

const { contextBridge, ipcRenderer } = electron;

/**
 * The renderer's only door to the main process. It exposes functions, never ipcRenderer
 * itself, and no secret: the launch token is added to requests by the main process, and
 * the sign-in poll token never leaves it. Each function calls one fixed channel; there is no
 * generic invoke. Channel names match main/ (sandboxed preloads cannot import them;
 * test/main/bridge.test.ts checks they agree).
 */
interface EnvEntry {
  key: string;
  value: string;
}

/** The clib device login as the service reports it (GET /clib/setup/status). */
interface ClibSetupState {
  status: 'idle' | 'pending' | 'approved' | 'failed' | 'expired' | 'cancelled';
  agent_id?: string;
  method?: 'device_auth' | 'api_key';
  verification_url?: string;
  user_code?: string;
  expires_at?: string;
  detail?: string;
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
  bootstrap: {
    clia: {
      /** Starts `claude setup-token` and opens its sign-in page in the system browser. */
      start: (): Promise<{ authorize_url: string; session_id: string }> => ipcRenderer.invoke('space:clia:start'),
      /** The `code#state` text the sign-in page shows; saves CLIA_CODE_OAUTH_TOKEN. */
      submitCode: (sessionId: string, code: string): Promise<{ ok: true }> => ipcRenderer.invoke('space:clia:code', sessionId, code),
    },
    clib: {
      /** Starts the device login and opens its verification page; show `user_code` to the user. */
      start: (): Promise<ClibSetupState> => ipcRenderer.invoke('space:clib:start'),
      status: (): Promise<ClibSetupState> => ipcRenderer.invoke('space:clib:status'),
      cancel: (): Promise<ClibSetupState> => ipcRenderer.invoke('space:clib:cancel'),
      /** Instead of the device login: saves the key as PROVB_API_KEY. */
      saveApiKey: (apiKey: string): Promise<ClibSetupState> => ipcRenderer.invoke('space:clib:api-key', apiKey),
    },
  },
};

contextBridge.exposeInMainWorld('space', api);

export type SpaceBridge = typeof api;

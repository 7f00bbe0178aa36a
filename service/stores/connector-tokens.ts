import { HttpError } from '../errors.js';
import { JsonFile } from './json-file.js';

/**
 * The token file of the token-based connectors (~/.space-state/connectors.json; the spec's
 * "token file"): one JSON object with an entry per connector under the spec's keys
 * `codehost`, `deployhost`, `agenthost`, plus the deploy host's registered OAuth client.
 * Unencrypted (spec), 0600 in a 0700 folder, every change a locked read-merge-write replaced
 * atomically, so keys the service does not own survive. A bare string under a key (a file
 * written by hand) is read as that connector's token.
 */
export type TokenConnector = 'codehost' | 'deployhost' | 'agenthost';

export interface StoredToken {
  token: string;
  /** How it arrived: pasted (`token`), the code-host CLI's device flow (`cli`), or OAuth. */
  source: 'token' | 'cli' | 'oauth';
  /** What the host said about the token's owner when it was last checked. */
  user?: Record<string, unknown>;
  refresh_token?: string;
  expires_at?: string;
  scope?: string;
  saved_at: string;
}

/** A client the deploy host's authorization server registered for us (RFC 7591). */
export interface RegisteredClient {
  issuer: string;
  redirect_uri: string;
  client_id: string;
  client_secret?: string;
  registered_at: string;
}

type TokenFile = Record<string, unknown>;

const CLIENT_KEY = 'deployhost_client';

export class ConnectorTokenStore {
  private readonly json: JsonFile<TokenFile>;

  constructor(readonly file: string) {
    this.json = new JsonFile<TokenFile>(file, () => ({}), { mode: 0o600, dirMode: 0o700, parentMode: 0o700 });
  }

  async get(name: TokenConnector): Promise<StoredToken | undefined> {
    return asToken(this.checked(await this.json.read())[name]);
  }

  async set(name: TokenConnector, entry: Omit<StoredToken, 'saved_at'>): Promise<void> {
    await this.change((file) => ({ ...file, [name]: { ...entry, saved_at: new Date().toISOString() } }));
  }

  /** Removes the entry; false when there was none (nothing is written then). */
  async clear(name: TokenConnector): Promise<boolean> {
    const present = name in this.checked(await this.json.read());
    if (!present) return false;
    await this.change((file) => {
      const next = { ...file };
      delete next[name];
      return next;
    });
    return true;
  }

  async registeredClient(issuer: string, redirectUri: string): Promise<RegisteredClient | undefined> {
    const client = this.checked(await this.json.read())[CLIENT_KEY] as Partial<RegisteredClient> | undefined;
    if (!client || typeof client.client_id !== 'string') return undefined;
    return client.issuer === issuer && client.redirect_uri === redirectUri ? (client as RegisteredClient) : undefined;
  }

  async saveRegisteredClient(client: RegisteredClient): Promise<void> {
    await this.change((file) => ({ ...file, [CLIENT_KEY]: client }));
  }

  private change(edit: (file: TokenFile) => TokenFile): Promise<void> {
    return this.json.update((raw) => ({ next: edit(this.checked(raw)), result: undefined }));
  }

  private checked(value: unknown): TokenFile {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as TokenFile;
    throw new HttpError(500, `${this.file} is not a JSON object; fix or remove it (it was left untouched)`);
  }
}

function asToken(value: unknown): StoredToken | undefined {
  if (typeof value === 'string' && value !== '') return { token: value, source: 'token', saved_at: '' };
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as Partial<StoredToken>;
  if (typeof entry.token !== 'string' || entry.token === '') return undefined;
  return { ...entry, source: entry.source ?? 'token', saved_at: entry.saved_at ?? '' } as StoredToken;
}

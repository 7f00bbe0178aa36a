import * as oauth from 'oauth4webapi';
import type { ConnectorsConfig } from '../../config.js';
import { HttpError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ConnectorTokenStore } from '../../stores/connector-tokens.js';
import { checkBearer } from '../bearer-check.js';
import { PendingLogins } from './pending.js';

/**
 * The deploy host's OAuth 2 authorization-code flow with PKCE (S256), done by oauth4webapi:
 * RFC 8414 discovery of the authorization server from SPACE_DEPLOYHOST_ISSUER, a client id
 * that is configured, or registered once by RFC 7591 Dynamic Client Registration and kept
 * in the token file, a one-time `state` with the code verifier kept server-side, the code
 * exchange, and the user read from the user endpoint. http:// is allowed for loopback
 * servers only (local development and tests).
 */
export interface StartedLogin {
  authorize_url: string;
  state: string;
  code_verifier_id: string;
}

type Settings = Pick<ConnectorsConfig, 'deployhostIssuer' | 'deployhostClientId' | 'deployhostScopes' | 'deployhostUserUrl'>;

interface ClientRef {
  clientId: string;
  clientSecret: string | undefined;
}

export class DeployhostOAuth {
  private server: Promise<oauth.AuthorizationServer> | undefined;
  private registering: Promise<ClientRef> | undefined;
  private readonly pending = new PendingLogins();

  constructor(
    private readonly settings: Settings,
    private readonly store: ConnectorTokenStore,
    private readonly redirectUri: () => string,
    private readonly log: Logger,
  ) {}

  get issuer(): string | undefined {
    return this.settings.deployhostIssuer;
  }

  async start(): Promise<StartedLogin> {
    const as = await this.authorizationServer();
    if (!as.authorization_endpoint) throw new HttpError(502, 'The deploy host publishes no authorization endpoint');
    const redirectUri = this.redirectUri();
    const client = await this.client(as, redirectUri);
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const login = this.pending.add({ state: oauth.generateRandomState(), codeVerifier, ...client, redirectUri });
    const url = new URL(as.authorization_endpoint);
    const scopes = this.scopes(as);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', client.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
    url.searchParams.set('state', login.state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return { authorize_url: url.toString(), state: login.state, code_verifier_id: login.codeVerifierId };
  }

  /**
   * Finishes a login from the redirect's parameters (code, state, maybe iss or error): the
   * state is used up whatever happens next. Stores the token; answers the user.
   */
  async finish(params: URLSearchParams, codeVerifierId?: string): Promise<Record<string, unknown>> {
    const login = this.pending.take(params.get('state') ?? '', codeVerifierId);
    const as = await this.authorizationServer();
    const client: oauth.Client = { client_id: login.clientId };
    const auth = login.clientSecret ? oauth.ClientSecretPost(login.clientSecret) : oauth.None();
    let tokens: oauth.TokenEndpointResponse;
    try {
      const callback = oauth.validateAuthResponse(as, client, params, login.state);
      const response = await oauth.authorizationCodeGrantRequest(as, client, auth, callback, login.redirectUri, login.codeVerifier, this.options(as.token_endpoint));
      tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    } catch (err) {
      throw asHttpError(err);
    }
    const user = await this.user(tokens.access_token);
    await this.store.set('deployhost', {
      token: tokens.access_token,
      source: 'oauth',
      ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
      ...(tokens.expires_in ? { expires_at: new Date(Date.now() + tokens.expires_in * 1000).toISOString() } : {}),
      ...(tokens.scope ? { scope: tokens.scope } : {}),
      ...(user ? { user } : {}),
    });
    this.log.info({ connector: 'deployhost' }, 'deploy host connected through OAuth');
    return user ?? {};
  }

  /** The token owner's record from the user endpoint; undefined when none is known. */
  async user(token: string): Promise<Record<string, unknown> | undefined> {
    const url = this.settings.deployhostUserUrl ?? (this.issuer ? (await this.authorizationServer()).userinfo_endpoint : undefined);
    if (!url) return undefined;
    return checkBearer({ url, token, label: 'The deploy host' });
  }

  /** What the resource metadata document needs; undefined parts when the server cannot be reached. */
  async published(): Promise<{ registrationEndpoint?: string; scopes: string[] }> {
    if (!this.issuer) return { scopes: [...this.settings.deployhostScopes] };
    try {
      const as = await this.authorizationServer();
      return { registrationEndpoint: as.registration_endpoint, scopes: this.scopes(as) };
    } catch {
      return { scopes: [...this.settings.deployhostScopes] };
    }
  }

  private scopes(as: oauth.AuthorizationServer): string[] {
    return this.settings.deployhostScopes.length > 0 ? [...this.settings.deployhostScopes] : (as.scopes_supported ?? []);
  }

  /** Discovered once; a failed discovery is retried on the next call. */
  private authorizationServer(): Promise<oauth.AuthorizationServer> {
    const issuer = this.issuer;
    if (!issuer) return Promise.reject(new HttpError(503, 'The deploy host is not configured: set SPACE_DEPLOYHOST_ISSUER'));
    this.server ??= (async () => {
      const url = new URL(issuer);
      const response = await oauth.discoveryRequest(url, { algorithm: 'oauth2', ...this.options(issuer) });
      return oauth.processDiscoveryResponse(url, response);
    })().catch((err: unknown) => {
      this.server = undefined;
      throw err instanceof HttpError ? err : new HttpError(502, `The deploy host's authorization server could not be discovered (${describe(err)})`);
    });
    return this.server;
  }

  private async client(as: oauth.AuthorizationServer, redirectUri: string): Promise<ClientRef> {
    if (this.settings.deployhostClientId) return { clientId: this.settings.deployhostClientId, clientSecret: undefined };
    const stored = await this.store.registeredClient(as.issuer, redirectUri);
    if (stored) return { clientId: stored.client_id, clientSecret: stored.client_secret };
    // Concurrent starts share one registration.
    this.registering ??= this.register(as, redirectUri).finally(() => (this.registering = undefined));
    return this.registering;
  }

  private async register(as: oauth.AuthorizationServer, redirectUri: string): Promise<ClientRef> {
    if (!as.registration_endpoint) throw new HttpError(502, 'The deploy host offers no client registration; set SPACE_DEPLOYHOST_CLIENT_ID');
    const scopes = this.scopes(as);
    let client: Awaited<ReturnType<typeof oauth.processDynamicClientRegistrationResponse>>;
    try {
      const response = await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Space',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
        },
        this.options(as.registration_endpoint),
      );
      client = await oauth.processDynamicClientRegistrationResponse(response);
    } catch (err) {
      throw asHttpError(err, 'Client registration with the deploy host failed');
    }
    const secret = typeof client.client_secret === 'string' ? client.client_secret : undefined;
    await this.store.saveRegisteredClient({
      issuer: as.issuer,
      redirect_uri: redirectUri,
      client_id: client.client_id,
      ...(secret ? { client_secret: secret } : {}),
      registered_at: new Date().toISOString(),
    });
    this.log.info({ connector: 'deployhost', client_id: client.client_id }, 'registered with the deploy host');
    return { clientId: client.client_id, clientSecret: secret };
  }

  private options(url: string | undefined): { [oauth.allowInsecureRequests]?: boolean } {
    return url && isLoopbackHttp(url) ? { [oauth.allowInsecureRequests]: true } : {};
  }
}

function isLoopbackHttp(raw: string): boolean {
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return url.protocol === 'http:' && (host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host));
}

/** The server's own error code is safe to show; never a token or a code. */
function asHttpError(err: unknown, prefix = 'The deploy host refused the sign-in'): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof oauth.AuthorizationResponseError || err instanceof oauth.ResponseBodyError) return new HttpError(400, `${prefix} (${err.error})`);
  return new HttpError(502, `${prefix} (${describe(err)})`);
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code ?? (err as Error).message;
}

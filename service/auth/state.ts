/**
 * The upstream sign-in result, held in memory only (spec: lost on restart, never refreshed).
 */
export interface AuthTokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  user_id: string;
}

export class AuthState {
  private tokens: AuthTokens | undefined;
  private signedInAt: Date | undefined;

  constructor(private readonly apiKey: string | undefined) {}

  set(tokens: AuthTokens): void {
    this.tokens = tokens;
    this.signedInAt = new Date();
  }

  clear(): void {
    this.tokens = undefined;
    this.signedInAt = undefined;
  }

  /** The bearer for upstream calls: the signed-in token, else SPACE_API_KEY. */
  bearer(): string | undefined {
    return this.tokens?.access_token ?? this.apiKey;
  }

  /** Safe to show anywhere: which credential exists, never the credential. */
  sanitized(): {
    signed_in: boolean;
    source: 'poll_token' | 'api_key' | 'none';
    user_id: string | null;
    expires_in: number | null;
    signed_in_at: string | null;
    expires_at: string | null;
  } {
    const expiresAt = this.tokens && this.signedInAt ? new Date(this.signedInAt.getTime() + this.tokens.expires_in * 1000) : undefined;
    return {
      signed_in: this.tokens !== undefined,
      source: this.tokens ? 'poll_token' : this.apiKey ? 'api_key' : 'none',
      user_id: this.tokens?.user_id ?? null,
      expires_in: this.tokens?.expires_in ?? null,
      signed_in_at: this.signedInAt?.toISOString() ?? null,
      // Informational: the bearer is never refreshed (spec), so past this the upstream may refuse it.
      expires_at: expiresAt && !Number.isNaN(expiresAt.getTime()) ? expiresAt.toISOString() : null,
    };
  }
}

import type { ConfigRead } from './gateway-config.js';

/**
 * The credential the service presents to the gateway. A user who ran `openclaw onboard` has
 * `gateway.auth` in openclaw.json (a token, or a password), and OpenClaw takes the configured
 * credential over OPENCLAW_GATEWAY_TOKEN, so the service uses the configured auth as it is
 * (their own clients and daemon keep working with it). Resolved as OpenClaw 2026.9.6 does
 * (auth-resolve: config first, then OPENCLAW_GATEWAY_TOKEN / _PASSWORD from the environment;
 * mode = gateway.auth.mode, else password when one is set, else token). Only when no
 * credential is configured anywhere does the service bring its own per-launch token.
 */
export type GatewayAuth =
  /** Use what is configured: `secret` is the bearer (none for mode `none`). */
  | { kind: 'configured'; mode: 'token' | 'password' | 'none' | 'trusted-proxy'; secret: string | undefined }
  /** Nothing configured: start with `--auth token` and a fresh token in OPENCLAW_GATEWAY_TOKEN. */
  | { kind: 'per-launch' };

export class GatewayAuthError extends Error {}

const MODES = ['token', 'password', 'none', 'trusted-proxy'] as const;

/** `env`: the gateway's environment with its state dir's `.env` under it (what OpenClaw reads). */
export function gatewayAuth(read: ConfigRead, env: Readonly<Record<string, string | undefined>>): GatewayAuth {
  const auth = read.state === 'ok' && isObject(read.config.gateway?.auth) ? (read.config.gateway.auth as Record<string, unknown>) : {};
  const token = secret(auth.token, env, 'gateway.auth.token') ?? nonEmpty(env.OPENCLAW_GATEWAY_TOKEN);
  const password = secret(auth.password, env, 'gateway.auth.password') ?? nonEmpty(env.OPENCLAW_GATEWAY_PASSWORD);
  const configured = auth.mode;
  if (configured !== undefined && !MODES.includes(configured as (typeof MODES)[number])) {
    throw new GatewayAuthError(`gateway.auth.mode in openclaw.json is ${JSON.stringify(configured)}; the service knows token, password, none and trusted-proxy.`);
  }
  const mode = (configured as (typeof MODES)[number] | undefined) ?? (password ? 'password' : token ? 'token' : undefined);
  switch (mode) {
    case undefined:
      return { kind: 'per-launch' };
    case 'token':
      // Token mode without a token anywhere: the per-launch token in the env is the one.
      return token ? { kind: 'configured', mode, secret: token } : { kind: 'per-launch' };
    case 'none':
      return { kind: 'configured', mode, secret: undefined };
    case 'password':
    case 'trusted-proxy':
      // trusted-proxy: same-host callers may use the password directly (OpenClaw's docs).
      if (!password) {
        throw new GatewayAuthError(
          `The runtimea gateway is set to ${mode} auth (gateway.auth.mode in openclaw.json), but no password is set for the service to use: set gateway.auth.password, or OPENCLAW_GATEWAY_PASSWORD in the gateway's .env.`,
        );
      }
      return { kind: 'configured', mode, secret: password };
  }
}

/** A configured credential: a string (with `${VAR}` substitution) or an env SecretRef. */
function secret(value: unknown, env: Readonly<Record<string, string | undefined>>, where: string): string | undefined {
  if (typeof value === 'string') {
    const ref = /^\$\{([A-Z_][A-Z0-9_]*)\}$/.exec(value.trim());
    return ref ? nonEmpty(env[ref[1]!]) : nonEmpty(value);
  }
  if (!isObject(value)) return undefined;
  const ref = value as { source?: unknown; id?: unknown };
  if (ref.source === 'env' && typeof ref.id === 'string') return nonEmpty(env[ref.id]);
  throw new GatewayAuthError(
    `${where} in openclaw.json is a ${String(ref.source)} secret reference, which the service cannot read; use an env reference (the variable in the gateway's .env) or a plain value.`,
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== '' ? value : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

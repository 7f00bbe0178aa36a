import { CHANNELS, type Channel } from '../../channels/channels.js';
import type { Config } from '../../config.js';
import { activeEnvStore } from '../../secrets/active-env.js';
import { gatewayConfigFile, readGatewayConfig, type ConfigRead } from './gateway-config.js';
import type { GatewayStatus, RuntimeaGateway } from './gateway.js';
import { getJson } from './stale.js';

/**
 * GET /api/channels/runtimea/status: the gateway's state and whether it answers, and for each
 * channel whether it has credentials (active env file or the gateway's config) and is routed
 * (OpenClaw 2026.9 starts a channel only when its `channels.<id>` block exists and is not
 * disabled; `bindings` pick the agent, else the default agent). Never a token, never a start:
 * asking for the status does not start the gateway.
 */
export interface ChannelStatus {
  credentials: boolean;
  credential_source: 'env_file' | 'config' | null;
  configured: boolean;
  routed: boolean;
  agent: string | null;
}

export interface RuntimeaStatus {
  gateway: GatewayStatus & { reachable: boolean; ready: boolean; failing: string[] };
  config: ConfigRead['state'];
  channels: Record<Channel, ChannelStatus>;
}

const ENV_KEYS: Record<Channel, string[]> = {
  telegram: ['TELEGRAM_BOT_TOKEN'],
  discord: ['DISCORD_BOT_TOKEN'],
  // Socket Mode needs the bot token and the app-level token.
  slack: ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN'],
};

const CONFIG_KEYS: Record<Channel, string[][]> = {
  telegram: [['botToken'], ['tokenFile']],
  discord: [['token']],
  slack: [['botToken', 'appToken']],
};

/** What the status reads: the configuration and the service's one gateway. */
export interface RuntimeaStatusDeps {
  readonly config: Config;
  readonly runtimeaGateway: RuntimeaGateway;
}

export async function runtimeaStatus(ctx: RuntimeaStatusDeps): Promise<RuntimeaStatus> {
  const gateway = ctx.runtimeaGateway.status();
  const [probe, env, read] = await Promise.all([
    gateway.url ? getJson(`${gateway.url}/readyz`, 1500) : Promise.resolve(undefined),
    activeEnvStore(ctx.config).then((s) => s.entries()),
    readGatewayConfig(gatewayConfigFile(ctx.config.runtimea.stateDir, process.env)),
  ]);
  const values = new Map(env.filter((e) => e.value).map((e) => [e.key, e.value]));
  const config = read.state === 'ok' ? read.config : {};
  const channels = Object.fromEntries(CHANNELS.map((c) => [c, channelStatus(c, values, config)])) as Record<Channel, ChannelStatus>;
  const failing = Array.isArray(probe?.body?.failing) ? (probe.body.failing as unknown[]).map(String) : [];
  return { gateway: { ...gateway, reachable: !!probe, ready: probe?.status === 200, failing }, config: read.state, channels };
}

function channelStatus(channel: Channel, env: Map<string, string>, config: Record<string, any>): ChannelStatus {
  const block = config.channels?.[channel];
  const inEnv = ENV_KEYS[channel].every((k) => env.has(k));
  const inConfig = !!block && typeof block === 'object' && CONFIG_KEYS[channel].some((keys) => keys.every((k) => isSet(block[k])));
  const credentials = inConfig || inEnv;
  const configured = !!block && typeof block === 'object' && block.enabled !== false;
  const routed = credentials && configured;
  return { credentials, credential_source: inConfig ? 'config' : inEnv ? 'env_file' : null, configured, routed, agent: routed ? agentFor(channel, config) : null };
}

/** A token as a string, or as an OpenClaw SecretRef ({source, id}). */
function isSet(value: unknown): boolean {
  return (typeof value === 'string' && value.trim() !== '') || (!!value && typeof value === 'object' && 'source' in value);
}

function agentFor(channel: Channel, config: Record<string, any>): string {
  const bindings: any[] = Array.isArray(config.bindings) ? config.bindings : [];
  const bound = bindings.find((b) => b?.match?.channel === channel && typeof b.agentId === 'string');
  if (bound) return bound.agentId as string;
  const list: any[] = Array.isArray(config.agents?.list) ? config.agents.list : [];
  return (list.find((a) => a?.default)?.id as string | undefined) ?? 'main';
}

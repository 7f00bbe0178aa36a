import type { EnvEntry } from '../stores/env-file.js';

export const CHANNELS = ['slack', 'telegram', 'discord'] as const;
export type Channel = (typeof CHANNELS)[number];

/**
 * The env variables a channel's credentials go to: the names the runtimea gateway
 * (OpenClaw) reads as the default account's tokens. Slack's Socket Mode needs two tokens;
 * an app-level token (`xapp-`) sent as `token` goes to SLACK_APP_TOKEN, so a client with one
 * token field can add both, one call each.
 */
export function channelEntries(channel: Channel, token: string, appToken?: string): EnvEntry[] {
  switch (channel) {
    case 'telegram':
      return [{ key: 'TELEGRAM_BOT_TOKEN', value: token }];
    case 'discord':
      return [{ key: 'DISCORD_BOT_TOKEN', value: token }];
    case 'slack': {
      const entries = [{ key: token.startsWith('xapp-') ? 'SLACK_APP_TOKEN' : 'SLACK_BOT_TOKEN', value: token }];
      if (appToken) entries.push({ key: 'SLACK_APP_TOKEN', value: appToken });
      return entries;
    }
  }
}

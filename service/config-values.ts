import { readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Reading the service's environment values: each parser checks one kind of value and throws
// ConfigError with the variable's name and what it must be (service/config.ts assembles them).

/** A setting the service cannot start with. */
export class ConfigError extends Error {}

export function resolveHome(value: string | undefined): string {
  const home = value || os.homedir();
  if (!path.isAbsolute(home)) throw new ConfigError(`HOME must be absolute, got ${home}`);
  try {
    return realpathSync(home);
  } catch {
    throw new ConfigError(`HOME does not exist: ${home}`);
  }
}

export function expandHome(value: string | undefined, home: string, name: string): string | undefined {
  if (!value) return undefined;
  const expanded = value === '~' ? home : value.startsWith('~/') ? path.join(home, value.slice(2)) : value;
  if (!path.isAbsolute(expanded)) throw new ConfigError(`${name} must be absolute, got ${value}`);
  return path.resolve(expanded);
}

/** A URL's hostname (IPv6 in brackets) that names this machine. */
export function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The service is reachable only from this machine: anything but loopback is refused. */
export function parseLoopbackHost(value: string | undefined): string {
  const host = value || '127.0.0.1';
  if (host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)) return host;
  throw new ConfigError(`SPACE_HOST must be a loopback address (127.0.0.1, ::1 or localhost), got ${host}`);
}

/** The local model server is probed on this machine only. */
export function parseLoopbackUrl(value: string | undefined): string {
  const raw = value || 'http://127.0.0.1:11434';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`SPACE_LOCALMODEL_URL is not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' || !isLoopbackHostname(url.hostname)) throw new ConfigError(`SPACE_LOCALMODEL_URL must be an http:// loopback URL, got ${raw}`);
  return raw.replace(/\/+$/, '');
}

export function parsePort(value: string | undefined, fallback = 5002, name = 'SPACE_PORT'): number {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${name} is not a port: ${value}`);
  return port;
}

export function parsePositiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a positive integer, got ${value}`);
  return n;
}

export function parseHttpUrl(value: string | undefined, name: string): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got ${value}`);
  return value.replace(/\/+$/, '');
}

/** A decimal integer of 0 or more; unset or empty: the fallback. */
export function parseNonNegativeInt(value: string | undefined, name: string, fallback: number): number {
  if (!value) return fallback;
  if (!/^\d{1,9}$/.test(value)) throw new ConfigError(`${name} must be an integer of 0 or more, got ${value}`);
  return Number(value);
}

/**
 * SPACE_HEAP_GROWING_PERCENT (process/heap.ts), default 50. Apart from the rest of the config:
 * the built entry reads it before it compiles the service (cached-start.ts).
 */
export function parseHeapGrowingPercent(env: Readonly<Record<string, string | undefined>>): number {
  return parseNonNegativeInt(env.SPACE_HEAP_GROWING_PERCENT, 'SPACE_HEAP_GROWING_PERCENT', 50);
}

/** on/off, 1/0, true/false, yes/no (any case); unset or empty: the fallback. */
export function parseSwitch(value: string | undefined, name: string, fallback: boolean): boolean {
  if (!value) return fallback;
  const v = value.toLowerCase();
  if (['on', '1', 'true', 'yes'].includes(v)) return true;
  if (['off', '0', 'false', 'no'].includes(v)) return false;
  throw new ConfigError(`${name} must be on or off, got ${value}`);
}

export function parseHour(value: string | undefined): number {
  if (value === undefined || value === '') return 2;
  const hour = Number(value);
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) throw new ConfigError(`USAGE_SYNC_HOUR_UTC must be 0-23, got ${value}`);
  return hour;
}

export function parseHostname(value: string | undefined): string {
  const host = value || 'github.com';
  if (!/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$/.test(host)) throw new ConfigError(`SPACE_CODEHOST_HOST is not a host name: ${host}`);
  return host;
}

/** The window may only ever show this machine's pages: loopback http(s), or the app's own scheme. */
export function parseRendererUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const origin = safeOrigin(value);
  const url = origin ? new URL(value) : undefined;
  const web = url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHostname(url.hostname);
  if (origin !== 'app://space' && !web) throw new ConfigError(`SPACE_RENDERER_URL must be an http(s) loopback URL or app://space/..., got ${value}`);
  return value;
}

export function parseOrigins(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const origin = safeOrigin(o);
      if (!origin) throw new ConfigError(`SPACE_ALLOWED_ORIGINS has an entry that is not an origin: ${o}`);
      return origin;
    });
}

/**
 * The serialized origin of a URL, or undefined when it has none (`null`, `file:`, `data:`).
 * Custom standard schemes (Electron's `app://space`) keep `scheme://host`, which WHATWG URL
 * would report as the opaque origin `null`.
 */
export function safeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username || url.password || !url.host) return undefined;
  if (url.origin !== 'null') return url.origin;
  return `${url.protocol}//${url.host}`;
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value ? value : undefined;
}

/** The config API's saved choice to read the user's terminal history (docs/history.md); SPACE_HISTORY wins over it. */
export function historySettingFile(home: string): string {
  return path.join(home, '.space-state', 'history.json');
}

/** The saved choice, read synchronously with the rest of the configuration; undefined when none (or unreadable). */
export function savedHistorySetting(home: string): boolean | undefined {
  try {
    const doc = JSON.parse(readFileSync(historySettingFile(home), 'utf8')) as { enabled?: unknown };
    return typeof doc.enabled === 'boolean' ? doc.enabled : undefined;
  } catch {
    return undefined;
  }
}

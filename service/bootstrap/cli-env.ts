import type { Config } from '../config.js';

/** Proxy and CA settings a CLI needs to reach its sign-in service from behind a corporate proxy. */
const PASSED_THROUGH = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'LANG', 'LC_ALL'];

/**
 * The environment of a bootstrap CLI: PATH, HOME, the proxy settings, and what the flow
 * adds. Nothing else of the service's environment (no SPACE_* secret) is inherited.
 */
export function cliEnv(config: Config, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: config.home };
  for (const key of PASSED_THROUGH) if (process.env[key]) env[key] = process.env[key];
  return { ...env, ...extra };
}

import type { Logger } from '../../log.js';
import type { GatewayEndpoint } from './endpoint.js';
import { CHAT_ENDPOINT_PATCH } from './gateway-config.js';
import { GatewayOperator } from './operator.js';
import { chatEndpointServed } from './running-gateway.js';

/**
 * Turns the HTTP chat endpoint on through the gateway that just became ready: `config.get` for
 * the config's hash, then `config.patch` with it as `baseHash`, over an operator connection of its
 * own (closed after). The gateway writes its own config (its backups, and a refusal when the file
 * changed since the `config.get`) and hot-reloads `gateway.http.endpoints`: about 1 s inside a
 * gateway that runs anyway, where `openclaw config set` is a Node 24 process of its own (6 s and
 * 7 s of CPU on 2 cores, before the gateway could even start). Rejects with the gateway's words.
 */
async function patchChatEndpoint(endpoint: GatewayEndpoint, log: Logger): Promise<void> {
  const operator = new GatewayOperator(() => Promise.resolve(endpoint), log);
  try {
    const current = await operator.call('config.get', {});
    const baseHash = typeof current?.hash === 'string' ? current.hash : undefined;
    await operator.call('config.patch', { raw: CHAT_ENDPOINT_PATCH, ...(baseHash ? { baseHash } : {}) });
  } finally {
    await operator.close();
  }
}

/** The patch, else `configSet` (the CLI; the running gateway hot-reloads it too) while the gateway is still `live`. */
export async function turnOnChatEndpoint(endpoint: GatewayEndpoint, log: Logger, live: () => boolean, configSet: () => Promise<void>): Promise<void> {
  await patchChatEndpoint(endpoint, log).catch(async (err: Error) => {
    if (!live()) return;
    log.warn({ err: err.message }, 'runtimea: the gateway did not take config.patch; turning the chat endpoint on with openclaw config set');
    await configSet();
  });
}

/** Until the endpoint is served (polled every 250 ms); false once `timeoutMs` passed or the gateway is no longer `live`. */
export async function chatEndpointServedWithin(endpoint: GatewayEndpoint, live: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && live()) {
    if (await chatEndpointServed(endpoint.url, endpoint.token)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

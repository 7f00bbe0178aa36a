import { HttpError } from '../errors.js';
import { ENV_KEY } from '../stores/env-file.js';

/**
 * The env variable of a provider's API key: the provider id uppercased, every character
 * other than A-Z and 0-9 replaced by `_`, then `_API_KEY`. So `prova` -> PROVA_API_KEY,
 * `provb` -> PROVB_API_KEY, `open-router` -> OPEN_ROUTER_API_KEY.
 */
export function providerEnvKey(providerId: string): string {
  const key = `${providerId.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`;
  if (providerId.length > 64 || !ENV_KEY.test(key)) throw new HttpError(400, 'Invalid provider id: use letters, digits, - and _, starting with a letter');
  return key;
}

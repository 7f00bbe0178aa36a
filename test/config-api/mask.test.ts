import { describe, expect, it } from 'vitest';
import { HttpError } from '../../service/errors.js';
import { looksSecret, maskDeep, maskSecret } from '../../service/config-api/mask.js';
import { providerEnvKey } from '../../service/config-api/provider-key.js';

describe('maskSecret', () => {
  it('shows the last 4 characters only for values of 16+ characters, with a fixed-length mask', () => {
    expect(maskSecret('sk-0123456789abcdef')).toBe('****cdef');
    expect(maskSecret('0123456789abcdef')).toBe('****cdef');
    expect(maskSecret('0123456789abcde')).toBe('****');
    expect(maskSecret('x')).toBe('****');
    expect(maskSecret('')).toBe('');
  });
});

describe('looksSecret', () => {
  it.each(['api_key', 'apiKey', 'PROVA_API_KEY', 'botToken', 'client_secret', 'password', 'auth', 'credentials'])('%s is secret', (name) => {
    expect(looksSecret(name)).toBe(true);
  });
  it.each(['id', 'name', 'model', 'tools', 'env_file', 'systemPrompt', 'created_at'])('%s is not', (name) => {
    expect(looksSecret(name)).toBe(false);
  });
});

describe('maskDeep', () => {
  it('masks by field name at any depth and by known env values anywhere, keeping shape and booleans', () => {
    const known = 'canary-value-1234567890';
    const registry = {
      agents: [
        {
          id: 'a',
          name: 'A',
          api_key: 'sk-abcdefghijklmnop',
          key_set: true,
          auth: { type: 'oauth', refresh: 'r-123', pin: 1234, list: ['one-long-secret-value'] },
          systemPrompt: `use ${known} please`,
          tools: ['read', known],
          count: 3,
        },
      ],
    };
    expect(maskDeep(registry, [known, 'short'])).toEqual({
      agents: [
        {
          id: 'a',
          name: 'A',
          api_key: '****mnop',
          key_set: true,
          auth: { type: '****', refresh: '****', pin: '****', list: ['****alue'] },
          systemPrompt: '****ease',
          tools: ['read', '****7890'],
          count: 3,
        },
      ],
    });
  });

  it('does not search for known values shorter than 8 characters', () => {
    expect(maskDeep({ model: 'main' }, ['main'])).toEqual({ model: 'main' });
  });
});

describe('providerEnvKey', () => {
  it.each([
    ['prova', 'PROVA_API_KEY'],
    ['provb', 'PROVB_API_KEY'],
    ['open-router', 'OPEN_ROUTER_API_KEY'],
    ['x.ai', 'X_AI_API_KEY'],
    ['Mistral', 'MISTRAL_API_KEY'],
  ])('%s -> %s', (id, key) => {
    expect(providerEnvKey(id)).toBe(key);
  });

  it.each(['1password', 'x'.repeat(65)])('%s is refused with 400', (id) => {
    expect(() => providerEnvKey(id)).toThrow(HttpError);
  });
});

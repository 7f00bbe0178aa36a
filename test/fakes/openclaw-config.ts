/**
 * `openclaw.json` for runs of the real OpenClaw gateway against the loopback fake Chat
 * Completions provider (test/fakes/openai-chat.ts): a custom provider `fake` whose key is
 * `${OPENAI_API_KEY}` (what the service maps PROVB_API_KEY to), per-million prices so cost is
 * non-zero, the HTTP chat endpoint on, and the log file inside the state dir (default /tmp).
 */
export function openclawConfig(providerUrl: string, stateDir: string): Record<string, unknown> {
  return {
    gateway: { mode: 'local', bind: 'loopback', http: { endpoints: { chatCompletions: { enabled: true } } } },
    models: {
      mode: 'merge',
      providers: {
        fake: {
          baseUrl: providerUrl,
          api: 'openai-completions',
          apiKey: '${OPENAI_API_KEY}',
          models: [{ id: 'fake-model', name: 'fake-model', contextWindow: 128000, maxTokens: 4096, input: ['text'], reasoning: false, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } }],
        },
      },
    },
    agents: { defaults: { model: { primary: 'fake/fake-model' }, models: { 'fake/fake-model': {} } } },
    tools: { profile: 'full' },
    logging: { file: `${stateDir}/logs/openclaw-gateway.log` },
  };
}

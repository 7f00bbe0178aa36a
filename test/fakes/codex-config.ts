/**
 * `$CODEX_HOME/config.toml` for runs of the real codex against the loopback fake Responses
 * server: a custom provider (the built-in `openai` one cannot be redefined) reading its key
 * from CODEX_API_KEY (what the service maps PROVB_API_KEY to), no retries (errors surface at
 * once), classic function calls (gpt-5.5), and no analytics or plugin sync (both would try the
 * network and delay every exit).
 */
export function codexConfigToml(baseUrl: string, options: { retries?: number } = {}): string {
  const retries = options.retries ?? 0;
  return [
    'model = "gpt-5.5"',
    'model_provider = "fake"',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${baseUrl}"`,
    'env_key = "CODEX_API_KEY"',
    'wire_api = "responses"',
    `request_max_retries = ${retries}`,
    `stream_max_retries = ${retries}`,
    '[analytics]',
    'enabled = false',
    '[features]',
    'plugins = false',
    '',
  ].join('\n');
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCodexAuth } from '../../service/bootstrap/codex-auth.js';
import { findDevicePrompt, loginError } from '../../service/bootstrap/device-auth-text.js';
import { findAuthorizeUrl, findOAuthError, findOAuthToken, isRefusedCode } from '../../service/bootstrap/setup-token-screen.js';
import { terminalText } from '../../service/bootstrap/terminal-text.js';

const fixture = (name: string): string => readFileSync(path.resolve(import.meta.dirname, '../fixtures/bootstrap', name), 'utf8');

describe('reading the recorded claude setup-token screens', () => {
  it('the compact link, from the hyperlink the CLI draws', () => {
    expect(findAuthorizeUrl(fixture('setup-token-compact-link.screen.bin'))).toBe('https://claude.ai/oauth/authorize?IkiJOfdGFVV13phNI9EmhxamHeJqqidUiNqJnwQU7-E0');
  });

  it('the full link, also when only the visible text has it', () => {
    const raw = fixture('setup-token-full-link.screen.bin');
    const url = findAuthorizeUrl(raw)!;
    expect(new URL(url).searchParams.get('redirect_uri')).toBe('https://platform.claude.com/oauth/code/callback');
    const withoutHyperlinks = raw.replace(/\x1b\]8;[^\x07]*\x07/g, '');
    expect(findAuthorizeUrl(withoutHyperlinks)).toBe(url);
    expect(findAuthorizeUrl('Welcome to Claude Code')).toBeUndefined();
    expect(findAuthorizeUrl('\x1b]8;;http://evil.example/oauth/authorize\x07')).toBeUndefined();
  });

  it('the words Ink places with cursor moves read as words', () => {
    expect(terminalText(fixture('setup-token-full-link.screen.bin'))).toContain("Browser didn't open? Use the URL below to sign in (c to copy)");
  });

  it('the OAuth error line, without the retry prompt', () => {
    const error = findOAuthError(fixture('setup-token-oauth-error.screen.bin'))!;
    expect(error).toBe("OAuth error: Couldn't get an answer from the sign-in service (EAI_AGAIN). Check your internet connection, then try again.");
    expect(isRefusedCode(error)).toBe(false);
    expect(isRefusedCode('OAuth error: Authentication failed: Invalid authorization code')).toBe(true);
    const refused = findOAuthError(fixture('setup-token-code-refused.screen.bin'))!;
    expect(refused).toBe("OAuth error: That code wasn't accepted. It may be incomplete, expired, already used, or from an earlier sign-in attempt. Sign in again to get a new code.");
    expect(isRefusedCode(refused)).toBe(true);
  });

  it('the token on the recorded success screen', () => {
    const token = 'sk-ant-oat01-abcdefghijklmnopqrstuvwxyz_0123456789-ABCDEF';
    expect(findOAuthToken(fixture('setup-token-success.screen.bin').replace('{{TOKEN}}', token))).toBe(token);
  });

  it('a token only once it is drawn whole', () => {
    const token = 'sk-ant-oat01-abcdefghijklmnopqrstuvwxyz_0123456789-ABCDEF';
    expect(findOAuthToken(` \x1b[38;5;153m${token.slice(0, 30)}`)).toBeUndefined();
    expect(findOAuthToken(` \x1b[38;5;153m${token}\x1b[39m\r\n`)).toBe(token);
    expect(findOAuthToken('export CLAUDE_CODE_OAUTH_TOKEN=<token>\n')).toBeUndefined();
  });
});

describe('reading the recorded codex login output', () => {
  it('the verification link and user code', () => {
    expect(findDevicePrompt(fixture('codex-device-auth.stdout.txt'))).toEqual({ verification_url: 'http://127.0.0.1:18080/codex/device', user_code: 'AXNE-TCUJ' });
    expect(findDevicePrompt(fixture('codex-device-auth.stdout.txt').slice(0, 300))).toBeUndefined();
  });

  it('the error line, past the warning', () => {
    expect(loginError(fixture('codex-device-auth-denied.stderr.txt'))).toBe('Error logging in: device auth failed with status 400 Bad Request');
    expect(loginError(fixture('codex-device-auth.stderr.txt'))).toBe('Successfully logged in');
    expect(loginError('')).toBe('no output');
  });

  it('auth.json: ChatGPT tokens with the access token expiry and plan; API key; nothing usable', () => {
    expect(parseCodexAuth(JSON.parse(fixture('codex-device-auth.auth.json')))).toEqual({ mode: 'chatgpt', expiresAt: '2026-12-01T15:08:38.000Z', plan: 'plus' });
    expect(parseCodexAuth({ auth_mode: 'apikey', OPENAI_API_KEY: 'sk-test' })).toEqual({ mode: 'api_key' });
    expect(parseCodexAuth({ auth_mode: 'apikey', OPENAI_API_KEY: null })).toBeUndefined();
    expect(parseCodexAuth({ auth_mode: 'chatgpt', tokens: {} })).toBeUndefined();
    expect(parseCodexAuth({ auth_mode: 'chatgpt', tokens: { refresh_token: 'rt', access_token: 'not.a-jwt' } })).toEqual({ mode: 'chatgpt' });
    expect(parseCodexAuth(null)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { failureLine, parseAuthLink, parseAuthorizeToken, parseConfigQuestion } from '../../service/connectors/drives/output.js';
import { isRemoteName } from '../../service/connectors/drives/remote-name.js';
import { parseSubmittedCode } from '../../service/connectors/drives/submit-input.js';

/** The pure readers of rclone 1.60 output (recorded in shared/research/connectors-usage.md) and of pasted codes. */
describe('rclone output', () => {
  it('finds the authorize link and its state in a NOTICE line, with or without the browser wording', () => {
    expect(parseAuthLink('2026/11/21 16:13:16 NOTICE: Please go to the following link: http://127.0.0.1:53682/auth?state=_GhAgNI479uyjsShYDATKQ')).toEqual({
      url: 'http://127.0.0.1:53682/auth?state=_GhAgNI479uyjsShYDATKQ',
      state: '_GhAgNI479uyjsShYDATKQ',
    });
    expect(parseAuthLink("NOTICE: If your browser doesn't open automatically go to the following link: http://127.0.0.1:53682/auth?state=a-b_c")?.state).toBe('a-b_c');
    expect(parseAuthLink('NOTICE: Make sure your Redirect URL is set to "http://127.0.0.1:53682/" in your custom config.')).toBeUndefined();
    expect(parseAuthLink('NOTICE: Waiting for code...')).toBeUndefined();
  });

  it('reads the token block, plain or base64-wrapped, and nothing else', () => {
    const token = '{"access_token":"ya29.fake","token_type":"Bearer","refresh_token":"1//fake-refresh","expiry":"2026-11-21T16:13:16.2313014Z"}';
    expect(JSON.parse(parseAuthorizeToken(`Paste the following into your remote machine --->\n${token}\n<---End paste\n`)!)).toEqual(JSON.parse(token));
    const wrapped = Buffer.from(JSON.stringify({ token })).toString('base64');
    expect(JSON.parse(parseAuthorizeToken(`Paste the following into your remote machine --->\n${wrapped}\n<---End paste\n`)!).access_token).toBe('ya29.fake');
    expect(parseAuthorizeToken('Paste the following into your remote machine --->\n{"token_type":"Bearer"}\n<---End paste')).toBeUndefined();
    expect(parseAuthorizeToken('')).toBeUndefined();
  });

  it('reads a --non-interactive question: state, error, the proposed answer', () => {
    const q = parseConfigQuestion('{"State":"teamdrive_ok","Option":{"Name":"config_change_team_drive","Default":false,"DefaultStr":"false"},"Error":"","Result":""}');
    expect(q).toEqual({ state: 'teamdrive_ok', error: '', option: 'config_change_team_drive', answer: 'false' });
    expect(parseConfigQuestion('{"State":"","Option":null,"Error":"","Result":""}')).toEqual({ state: '', error: '', option: undefined, answer: '' });
    expect(parseConfigQuestion('{"State":"choose_type","Option":null,"Error":"Failed to query available drives: x"}')?.error).toBe('Failed to query available drives: x');
    expect(parseConfigQuestion('not json')).toBeUndefined();
  });

  it('explains a failure with the fatal line, without the date', () => {
    const stderr = [
      '2026/11/21 16:13:16 NOTICE: Waiting for code...',
      '2026/11/21 16:13:17 Fatal error: config failed to refresh token: failed to start auth webserver: listen tcp 127.0.0.1:53682: bind: address already in use',
    ].join('\n');
    expect(failureLine(stderr)).toBe('Fatal error: config failed to refresh token: failed to start auth webserver: listen tcp 127.0.0.1:53682: bind: address already in use');
    expect(failureLine('')).toBe('the sync tool failed without a message');
    expect(failureLine('x'.repeat(900))).toHaveLength(503);
  });
});

describe('remote names', () => {
  it("takes rclone's characters only, never a leading dash", () => {
    for (const ok of ['gd', 'My_Drive-2', '_x', '0', 'a.b', 'x'.repeat(64)]) expect(isRemoteName(ok), ok).toBe(true);
    for (const bad of ['', '-x', '.x', 'a b', 'a:b', 'a/b', 'é', 'x'.repeat(65), 1, undefined]) expect(isRemoteName(bad), String(bad)).toBe(false);
  });
});

describe('pasted codes', () => {
  it('a bare code, trimmed', () => {
    expect(parseSubmittedCode('  4/0AbCd-EF_gh  ')).toEqual({ kind: 'code', code: '4/0AbCd-EF_gh', state: undefined });
  });

  it('a full redirect URL or its query: code and state', () => {
    expect(parseSubmittedCode('http://127.0.0.1:53682/?state=S1&code=C%2F1&scope=x')).toEqual({ kind: 'code', code: 'C/1', state: 'S1' });
    expect(parseSubmittedCode('http://localhost:53682/?code=C2&state=S2')).toEqual({ kind: 'code', code: 'C2', state: 'S2' });
    expect(parseSubmittedCode('?state=S3&code=C3')).toEqual({ kind: 'code', code: 'C3', state: 'S3' });
    expect(parseSubmittedCode('code=C4')).toEqual({ kind: 'code', code: 'C4', state: undefined });
  });

  it('a provider error, and what cannot be a code', () => {
    expect(parseSubmittedCode('http://127.0.0.1:53682/?error=access_denied&state=S')).toEqual({ kind: 'denied', error: 'access_denied' });
    expect(parseSubmittedCode('http://127.0.0.1:53682/?state=S')).toMatchObject({ kind: 'invalid' });
    expect(parseSubmittedCode('   ')).toMatchObject({ kind: 'invalid' });
    expect(parseSubmittedCode('two words')).toMatchObject({ kind: 'invalid' });
    expect(parseSubmittedCode('x'.repeat(9000))).toMatchObject({ kind: 'invalid' });
  });
});

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.js';
import { CLAUDE_DOUBLE } from '../helpers/chat.js';
import { startService } from '../helpers/service.js';
import { openSse } from '../helpers/sse.js';
import { closeAfterEach } from '../helpers/teardown.js';

/**
 * The diagnostics page's turns card in a real Chromium: the selected session's turns with
 * their changed files, a diff view, and a Revert button whose conflict answer (409) is shown
 * with the paths, then overwritten on the user's say-so. The CLI double runs the turn; the
 * file changes while it runs (what the checkpoints attribute to the turn).
 */
const track = closeAfterEach();

describe('the turns card of the diagnostics page', () => {
  it('shows a turn, its diff, a revert refused with the conflicting path, then forced', async () => {
    const svc = track(await startService({ env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, SPACE_CHAT_HEARTBEAT_CLI_MS: '300' } }));
    const project = path.join(svc.home, 'space-projects', 'page');
    await mkdir(project, { recursive: true });
    const res = await svc.post('/api/chat/prompt', { agent_name: 'clia_code', agent_id: 'page', text: 'slow hello' });
    const { stream_id: streamId, session_id: sessionId } = res.json();
    const sse = await openSse(svc.port, `/api/chat/stream/${streamId}`);
    await sse.waitFor((e) => e.event === 'text-delta', 30_000);
    await writeFile(path.join(project, 'page.txt'), 'made during the turn\n');
    await sse.ended;
    await expect.poll(async () => (await svc.get(`/api/sessions/${sessionId}/turns`)).json().turns?.at(-1)?.status, { timeout: 20_000 }).toBe('done');

    const browser = track(await launchBrowser());
    const { page, problems } = await browser.page();
    await page.goto(`${svc.url}/diagnostics`);
    await page.waitForSelector('body[data-loaded="true"]');
    await page.click(`#sessions [data-session="${sessionId}"]`);
    await page.waitForSelector('#turns .turn');
    expect(await page.textContent('#turns .turn .prompt')).toBe('slow hello');
    expect(await page.textContent('#turns .turn .counts')).toBe('done · +1 ~0 −0 files · +1 −0 lines');

    await page.click('#turns .turn .diff-button');
    await page.waitForSelector('#turns .turn .patch');
    expect(await page.textContent('#turns .turn .file-head')).toBe('added page.txt (+1 −0)');
    expect(await page.textContent('#turns .turn .patch')).toContain('+made during the turn');

    // The user edits the file: the revert is refused with that path, and the file keeps their bytes.
    await writeFile(path.join(project, 'page.txt'), 'the user edited it\n');
    await page.click('#turns .turn .revert-button');
    await page.waitForSelector('#turns .conflict');
    expect(await page.locator('#turns .conflict-path').allTextContents()).toEqual(['page.txt']);
    expect(existsSync(path.join(project, 'page.txt'))).toBe(true);

    await page.click('#turns .force-button');
    // The forced revert runs git on the project, then the page reloads its turns: seconds on a loaded machine.
    await expect.poll(() => page.locator('#turns .turn').count(), { timeout: 20_000 }).toBe(2);
    expect(await page.textContent('#turns .turn .kind')).toBe('↶ revert');
    expect(existsSync(path.join(project, 'page.txt'))).toBe(false);
    // The 409 is an answer the page shows, not a page failure; nothing else went wrong.
    expect(problems.filter((p) => !p.includes('status of 409'))).toEqual([]);
  }, 90_000);
});

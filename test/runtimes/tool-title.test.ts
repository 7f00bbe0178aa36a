import { describe, expect, it } from 'vitest';
import { toolTitle } from '../../service/runtimes/tool-title.js';

/** The one human line of a tool call or permission request (issue 23: "Write src/app.ts", "Run `npm test`"). */
describe('tool titles', () => {
  it('names the action and its object, paths inside the working directory relative to it', () => {
    expect(toolTitle('Write', { file_path: '/p/src/app.ts', content: 'x' }, '/p')).toBe('Write src/app.ts');
    expect(toolTitle('Edit', { file_path: '/elsewhere/a.ts' }, '/p')).toBe('Edit /elsewhere/a.ts');
    expect(toolTitle('Bash', { command: 'npm test' })).toBe('Run `npm test`');
    expect(toolTitle('command_execution', { command: ['bash', '-lc', 'ls'] })).toBe('Run `bash -lc ls`');
    expect(toolTitle('file_change', { changes: [{ path: '/p/a.txt' }, { path: '/p/b.txt' }] }, '/p')).toBe('Edit 2 files');
    expect(toolTitle('mcp__srv__tool', { a: 1 })).toBe('mcp__srv__tool');
  });

  it('is one line whatever line breaks the command or path holds (LF, CRLF, CR, U+2028/2029)', () => {
    for (const br of ['\n', '\r\n', '\r', '\u2028', '\u2029', '\n\n\r\n']) {
      const title = toolTitle('Bash', { command: `cd /tmp${br}  rm -rf build${br}make` });
      expect(title, JSON.stringify(br)).toBe('Run `cd /tmp rm -rf build make`');
      expect(toolTitle('Write', { file_path: `/p/a${br}b.txt` }, '/p')).toBe('Write a b.txt');
    }
  });

  it('is at most 200 characters', () => {
    const title = toolTitle('Bash', { command: 'x'.repeat(1000) });
    expect(title).toHaveLength(200);
    expect(title.endsWith('…')).toBe(true);
  });
});

import path from 'node:path';

/**
 * One human line for a tool call or a permission request ("Write src/app.ts", "Run `npm test`"),
 * from the tool's name and input. Covers the tool names the three programs use (Claude Code's
 * `Write`/`Edit`/`Bash`..., codex's `command_execution`/`file_change`); anything else is its
 * name. Paths inside `cwd` are shown relative to it. Pure.
 */
const MAX_TITLE = 200;

export function toolTitle(tool: string, input: unknown, cwd?: string): string {
  const i = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const file = (value: unknown): string => (typeof value === 'string' ? shown(value, cwd) : '');
  const command = (value: unknown): string => (typeof value === 'string' ? value : Array.isArray(value) ? value.join(' ') : '');
  let title: string;
  switch (tool) {
    case 'Write':
      title = `Write ${file(i.file_path)}`;
      break;
    case 'Edit':
    case 'MultiEdit':
      title = `Edit ${file(i.file_path)}`;
      break;
    case 'NotebookEdit':
      title = `Edit ${file(i.notebook_path)}`;
      break;
    case 'Read':
      title = `Read ${file(i.file_path)}`;
      break;
    case 'Bash':
    case 'command_execution':
    case 'exec':
      title = `Run \`${oneLine(command(i.command ?? i.cmd))}\``;
      break;
    case 'file_change': {
      const changes = Array.isArray(i.changes) ? (i.changes as Array<{ path?: unknown }>) : [];
      title = changes.length === 1 ? `Edit ${file(changes[0]!.path)}` : changes.length > 1 ? `Edit ${changes.length} files` : 'Edit files';
      break;
    }
    case 'WebFetch':
      title = `Fetch ${typeof i.url === 'string' ? i.url : ''}`;
      break;
    case 'WebSearch':
    case 'web_search':
      title = `Search the web for "${typeof i.query === 'string' ? i.query : ''}"`;
      break;
    case 'ExitPlanMode':
      title = 'Leave plan mode and start on the plan';
      break;
    default:
      title = tool;
  }
  title = oneLine(title).trim() || tool;
  return title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 1)}…` : title;
}

function shown(file: string, cwd: string | undefined): string {
  if (!cwd || !path.isAbsolute(file)) return file;
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** Every line break (LF, CR, VT, FF, NEL, U+2028/2029) with the blanks around it becomes one space. */
function oneLine(text: string): string {
  return text.replace(/\s*[\n\v\f\r\x85\u2028\u2029]\s*/g, ' ');
}

import { readFile } from 'node:fs/promises';
import { withFileNames } from '../attachments.js';
import type { Attachment } from '../runtime.js';

/** A user message's `content` for Claude Code's stream-json input. */
export type UserContent = string | Array<Record<string, unknown>>;

/**
 * The text (other files named by path), then each image as a base64 `image` block, the
 * Messages API's shape, which Claude Code passes on to the model as it is. Text alone stays
 * a plain string, as the CLI's own user messages are.
 */
export async function userContent(text: string, attachments: readonly Attachment[] | undefined): Promise<UserContent> {
  const body = withFileNames(text, attachments);
  const images = (attachments ?? []).filter((a) => a.kind === 'image');
  if (images.length === 0) return body;
  const blocks = await Promise.all(
    images.map(async (a) => ({ type: 'image', source: { type: 'base64', media_type: a.mime, data: (await readFile(a.path)).toString('base64') } })),
  );
  return [{ type: 'text', text: body }, ...blocks];
}

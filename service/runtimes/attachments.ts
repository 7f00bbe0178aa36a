import type { Attachment } from './runtime.js';

/** How every runtime passes attachments it does not take as model input, and what logs keep of them. */
/** The prompt text with the non-image attachments named by path (images travel as images). */
export function withFileNames(text: string, attachments: readonly Attachment[] | undefined): string {
  const files = (attachments ?? []).filter((a) => a.kind === 'file');
  if (files.length === 0) return text;
  return `${text}\n\nAttached files:\n${files.map((f) => `- ${f.path}`).join('\n')}`;
}

/** What /api/messages shows of a message's attachments: never their bytes. */
export function attachmentRecords(attachments: readonly Attachment[] | undefined): Array<{ name: string; path: string; mime: string }> | undefined {
  return attachments && attachments.length > 0 ? attachments.map((a) => ({ name: a.name, path: a.path, mime: a.mime })) : undefined;
}

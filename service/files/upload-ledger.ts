/**
 * The uploads of this run, by `file_id`, so a prompt can attach `{file_id}` of an earlier
 * upload. In memory and bounded (the oldest are forgotten first): a file_id from before a
 * restart is not found, and the client attaches by `path` instead.
 */
const MAX_REMEMBERED = 1000;

export class UploadLedger {
  private readonly byId = new Map<string, string>();

  remember(fileId: string, filePath: string): void {
    this.byId.delete(fileId);
    this.byId.set(fileId, filePath);
    if (this.byId.size > MAX_REMEMBERED) this.byId.delete(this.byId.keys().next().value!);
  }

  pathOf(fileId: string): string | undefined {
    return this.byId.get(fileId);
  }
}

import path from 'node:path';
import type { Approvals, PermissionAnswer, PermissionMode } from '../runtime.js';
import { toolTitle } from '../tool-title.js';
import type { Notification } from './app-server-map.js';

/**
 * Permission modes on `codex app-server` (docs/approvals.md): each mode's thread policy
 * (approvalPolicy x sandbox), and the answers to codex's `item/commandExecution/requestApproval`
 * and `item/fileChange/requestApproval` requests, asked of the client through `approvals`.
 * `accept_edits` accepts a file change whose paths are all inside the working directory
 * itself and asks about the rest. Without `approvals` every request is declined.
 */
export interface ThreadPolicy {
  approvalPolicy: 'never' | 'untrusted';
  sandbox: 'read-only' | 'workspace-write';
}

export function threadPolicy(mode: PermissionMode): ThreadPolicy {
  switch (mode) {
    case 'ask':
    case 'accept_edits':
      return { approvalPolicy: 'untrusted', sandbox: 'workspace-write' };
    case 'plan':
      return { approvalPolicy: 'never', sandbox: 'read-only' };
    default:
      return { approvalPolicy: 'never', sandbox: 'workspace-write' };
  }
}

const COMMAND = 'item/commandExecution/requestApproval';
const FILE_CHANGE = 'item/fileChange/requestApproval';
type Decision = 'accept' | 'acceptForSession' | 'decline';

export class ClibApprovals {
  /** The changes of each file-change item, from its item/started (the request names only the item). */
  private readonly changes = new Map<string, Array<{ path: string; kind: string }>>();

  constructor(
    private readonly mode: PermissionMode,
    private readonly cwd: string,
    private readonly approvals: Approvals | undefined,
  ) {}

  /** Sees every notification first, for the file changes a later request is about. */
  note(message: Notification): void {
    const item = message.params?.item;
    if (message.method !== 'item/started' || item?.type !== 'fileChange' || typeof item.id !== 'string') return;
    this.changes.set(item.id, (item.changes ?? []).map((c: any) => ({ path: String(c.path), kind: String(c.kind?.type ?? c.kind) })));
  }

  /** An AppServerRpc request handler: the approvals it takes, answered; anything else undefined. */
  handle = (method: string, params: any): Promise<unknown> | undefined => {
    if (method === COMMAND) return this.command(params ?? {});
    if (method === FILE_CHANGE) return this.fileChange(params ?? {});
    return undefined;
  };

  private async command(params: any): Promise<{ decision: Decision }> {
    const command = typeof params.command === 'string' ? params.command : '';
    const input = { command, ...(typeof params.cwd === 'string' ? { cwd: params.cwd } : {}), ...(params.reason ? { reason: String(params.reason) } : {}) };
    return { decision: await this.ask('command_execution', input, params.itemId) };
  }

  private async fileChange(params: any): Promise<{ decision: Decision }> {
    const changes = this.changes.get(params.itemId) ?? [];
    if (this.mode === 'accept_edits' && changes.length > 0 && !params.grantRoot && changes.every((c) => this.inside(c.path))) return { decision: 'accept' };
    const input = { changes, ...(params.reason ? { reason: String(params.reason) } : {}), ...(params.grantRoot ? { grant_root: String(params.grantRoot) } : {}) };
    return { decision: await this.ask('file_change', input, params.itemId) };
  }

  private async ask(tool: string, input: Record<string, unknown>, itemId: unknown): Promise<Decision> {
    if (!this.approvals) return 'decline';
    const answer: PermissionAnswer = await this.approvals.ask({
      tool,
      title: toolTitle(tool, input, this.cwd),
      input,
      options: ['allow', 'deny', 'allow_session'],
      ...(typeof itemId === 'string' ? { toolCallId: itemId } : {}),
    });
    return answer.decision === 'allow' ? 'accept' : answer.decision === 'allow_session' ? 'acceptForSession' : 'decline';
  }

  private inside(file: string): boolean {
    const rel = path.relative(this.cwd, path.resolve(this.cwd, file));
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  }
}

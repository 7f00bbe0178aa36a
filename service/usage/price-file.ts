import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { Logger } from '../log.js';
import { PriceDocument, priceTable, type PriceTable } from './pricing.js';

export interface CurrentPrices {
  table: PriceTable;
  /** What the table was made of (sent to scan workers, which build their own). */
  documents: { builtin: PriceDocument; override?: PriceDocument };
  /** Changes whenever the prices in force change (the override file was edited). */
  version: string;
  /** Why the override file is not in force, when it exists but cannot be used. */
  overrideError?: string;
}

/**
 * The built-in table (read once) and the user's override file, re-read whenever its size,
 * mtime or inode change (one stat per report). A broken override is reported and ignored:
 * the built-in prices stay in force.
 */
export class PriceFiles {
  private readonly builtin: PriceDocument;
  private cached: (CurrentPrices & { key: string }) | undefined;

  constructor(
    builtinFile: string,
    readonly overrideFile: string,
    private readonly log: Logger,
  ) {
    this.builtin = PriceDocument.parse(JSON.parse(readFileSync(builtinFile, 'utf8')));
  }

  get asOf(): string | undefined {
    return this.builtin.as_of;
  }

  async current(): Promise<CurrentPrices> {
    const st = await stat(this.overrideFile).catch(() => undefined);
    const key = st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'none';
    if (this.cached?.key === key) return this.cached;
    const loaded = st ? await this.withOverride() : { table: priceTable(this.builtin), documents: { builtin: this.builtin } };
    this.cached = { ...loaded, version: `${this.builtin.as_of ?? ''}/${key}`, key };
    return this.cached;
  }

  private async withOverride(): Promise<Omit<CurrentPrices, 'version'>> {
    let overrideError: string;
    try {
      const parsed = PriceDocument.safeParse(JSON.parse(await readFile(this.overrideFile, 'utf8')));
      if (parsed.success) return { table: priceTable(this.builtin, parsed.data), documents: { builtin: this.builtin, override: parsed.data } };
      const issue = parsed.error.issues[0];
      overrideError = `${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'}`;
    } catch (err) {
      overrideError = err instanceof SyntaxError ? `not JSON: ${err.message}` : String((err as Error).message ?? err);
    }
    this.log.warn({ file: this.overrideFile, error: overrideError }, 'usage price override ignored');
    return { table: priceTable(this.builtin), documents: { builtin: this.builtin }, overrideError };
  }
}

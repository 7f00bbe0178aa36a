/**
 * Appends lines to a transcript as a turn produces them without holding the turn up: lines
 * that arrive while a write is in flight go out together in the next one, in order.
 */
export class LineAppender {
  private pending: string[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly write: (lines: string[]) => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  add(...lines: string[]): void {
    this.pending.push(...lines);
    this.kick();
  }

  /** Resolves once every line added so far is written (or has failed and been reported). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private kick(): void {
    if (this.writing || this.pending.length === 0) return;
    const batch = this.pending.splice(0);
    this.writing = this.write(batch)
      .catch(this.onError)
      .finally(() => {
        this.writing = undefined;
        this.kick();
      });
  }
}

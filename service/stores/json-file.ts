import { readFile } from 'node:fs/promises';
import { HttpError } from '../errors.js';
import { withFileLock, writeFileAtomically, type AtomicWriteOptions } from './atomic.js';

/**
 * A JSON document in one file. Reads tolerate a missing file (the fallback is returned)
 * but never a corrupt one: a file that does not parse is reported and left untouched,
 * so a later write cannot silently replace the user's data.
 */
export class JsonFile<T> {
  constructor(
    readonly file: string,
    private readonly fallback: () => T,
    private readonly writeOptions: AtomicWriteOptions = {},
  ) {}

  async read(): Promise<T> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.fallback();
      throw err;
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new HttpError(500, `${this.file} is not valid JSON; fix or remove it (it was left untouched)`);
    }
  }

  /** Read, change, write atomically, with no other writer of this file in between. */
  update<R>(change: (current: T) => { next: T; result: R } | Promise<{ next: T; result: R }>): Promise<R> {
    return withFileLock(this.file, async () => {
      const { next, result } = await change(await this.read());
      await this.write(next);
      return result;
    });
  }

  write(value: T): Promise<void> {
    return writeFileAtomically(this.file, `${JSON.stringify(value, null, 2)}\n`, this.writeOptions);
  }
}

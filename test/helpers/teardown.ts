import { rm } from 'node:fs/promises';
import { afterEach } from 'vitest';

interface Closable {
  close(): Promise<void>;
}

/**
 * Registers an afterEach that closes, newest first, everything the test handed to the
 * returned function (services, fake servers, browsers).
 */
export function closeAfterEach(): <T extends Closable>(thing: T) => T {
  const open: Closable[] = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });
  return (thing) => {
    open.push(thing);
    return thing;
  };
}

/** A temp folder's removal, for closeAfterEach: handed over before what writes in it, it goes after that is closed. */
export function removal(dir: string): Closable {
  return { close: () => rm(dir, { recursive: true, force: true }) };
}

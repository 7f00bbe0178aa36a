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

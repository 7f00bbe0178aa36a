import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OffThreadSha256 } from '../../service/files/sha256-thread.js';

const hex = (...pieces: Buffer[]) => pieces.reduce((hash, piece) => hash.update(piece), createHash('sha256')).digest('hex');

describe('the upload hashing thread', () => {
  it('hashes pieces in the order given, and moves large pieces instead of copying them', async () => {
    const large = Buffer.alloc(256 * 1024, 7);
    const slice = Buffer.alloc(64 * 1024, 9).subarray(100, 50_000);
    const expected = hex(large, slice);
    const sha = new OffThreadSha256();
    await sha.update([large, slice]);
    expect(await sha.digest()).toBe(expected);
    expect(large.buffer.byteLength).toBe(0); // moved: the memory now belongs to the thread
    expect(slice.buffer.byteLength).toBe(0);
  });

  it('copies small pieces, which may share Node\'s Buffer pool with unrelated data', async () => {
    const small = Buffer.from('a small piece');
    const neighbour = Buffer.from('a neighbour in the same pool');
    expect(small.buffer).toBe(neighbour.buffer); // both from the pool: moving one would empty both
    const sha = new OffThreadSha256();
    await sha.update([small]);
    expect(await sha.digest()).toBe(hex(Buffer.from('a small piece')));
    expect(small.toString()).toBe('a small piece');
    expect(neighbour.toString()).toBe('a neighbour in the same pool');
  });

  it('copies a piece that is a small part of a larger block, which others may share', async () => {
    const block = Buffer.alloc(1024 * 1024, 5);
    const part = block.subarray(4096, 4096 + 64 * 1024);
    const sha = new OffThreadSha256();
    await sha.update([part]);
    expect(await sha.digest()).toBe(hex(Buffer.alloc(64 * 1024, 5)));
    expect(block.length).toBe(1024 * 1024);
    expect(part.length).toBe(64 * 1024);
  });

  it('keeps concurrent jobs apart, a dropped one included', async () => {
    const data = (seed: number) => Buffer.alloc(128 * 1024, seed);
    const jobs = [1, 2, 3].map((seed) => ({ seed, sha: new OffThreadSha256() }));
    const dropped = new OffThreadSha256();
    for (let round = 0; round < 3; round++) {
      await Promise.all([...jobs.map(({ seed, sha }) => sha.update([data(seed + round)])), dropped.update([data(99)])]);
    }
    dropped.drop();
    const digests = await Promise.all(jobs.map(({ sha }) => sha.digest()));
    expect(digests).toEqual(jobs.map(({ seed }) => hex(data(seed), data(seed + 1), data(seed + 2))));
  });

  it('an empty job is the digest of nothing', async () => {
    const sha = new OffThreadSha256();
    await sha.update([Buffer.alloc(0)]);
    expect(await sha.digest()).toBe(hex());
  });
});

/**
 * Upload of a 100 MB file to a real service process: throughput against the disk's own
 * write speed (same directory, same chunking, fsync included, measured between rounds)
 * and against a bare Node HTTP server that only discards the body (the loopback ceiling
 * on this machine), growth of the service's resident memory (goal: < 30 MB), and how long
 * `GET /` takes while the upload runs (goal: < 50 ms), asked every 20 ms. Rounds: 9, or
 * BENCH_UPLOAD_ROUNDS.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startChildService } from '../test/helpers/child-service.js';
import { answered, generated, upload } from '../test/helpers/multipart.js';
import { cpuMsOf, MB, median, percentile, probeLatency, row, rssOf, sampleRss } from './lib.js';

const SIZE = 100 * MB;
const ROUNDS = Number(process.env.BENCH_UPLOAD_ROUNDS ?? 9);
/**
 * The first 100 MB uploads of a process run while the JIT is still optimizing the upload
 * path (600-750 MB/s here, rising round by round): timed and shown apart, then the measured
 * rounds give the steady state of a service that has run a while.
 */
const FIRST_ROUNDS = 3;

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-upload-'));
const uploads = path.join(home, 'uploads');
const service = await startChildService({ home });
try {
  // Warm-up: first-request costs (module loading, JIT) are not what is measured.
  answered(await upload(service.port, { parts: [{ name: 'file', filename: 'warm.bin', data: generated(8 * MB) }] }));
  const first: number[] = [];
  const firstGrowths: number[] = [];
  for (let round = 0; round < FIRST_ROUNDS; round++) {
    const run = await timedUpload(service.port, service.pid);
    await rm(path.join(uploads, 'big.bin'));
    first.push(run.speed);
    firstGrowths.push(run.growth);
  }

  const disk: number[] = [];
  const ceiling: number[] = [];
  const ceilingGrowths: number[] = [];
  const ceilingCpu: number[] = [];
  const speeds: number[] = [];
  const growths: number[] = [];
  const latencies: number[] = [];
  const cpu: number[] = [];
  // GET / on the idle service, for comparison with the figure during uploads (same machine load).
  const idleProbe = probeLatency(service.port);
  await new Promise((r) => setTimeout(r, 1000));
  const idleLatencies = await idleProbe.stop();
  const bare = await startBareServer();
  for (let round = 0; round < ROUNDS; round++) {
    disk.push(await diskWriteSpeed(uploads));
    const bareRun = await timedUpload(bare.port, bare.pid);
    ceiling.push(bareRun.speed);
    ceilingGrowths.push(bareRun.growth);
    ceilingCpu.push(bareRun.cpuMs);
    const probe = probeLatency(service.port);
    const run = await timedUpload(service.port, service.pid);
    latencies.push(...(await probe.stop()));
    await rm(path.join(uploads, 'big.bin')); // each round writes a fresh file, as a new upload would
    speeds.push(run.speed);
    growths.push(run.growth);
    cpu.push(run.cpuMs);
  }
  const ratio = (median(speeds) / median(disk)) * 100;
  row('file size', '100 MB, generated and streamed by the client');
  row(`first ${FIRST_ROUNDS} uploads of the process (JIT warming)`, `${first.map((s) => s.toFixed(0)).join(', ')} MB/s, RSS growth ${firstGrowths.map((g) => g.toFixed(1)).join(', ')} MB`);
  row(`disk write speed (median of ${ROUNDS}, fsync included)`, `${median(disk).toFixed(0)} MB/s`);
  row(
    `bare HTTP discard, same client (median of ${ROUNDS})`,
    `${median(ceiling).toFixed(0)} MB/s, CPU ${median(ceilingCpu).toFixed(0)} ms per 100 MB, RSS growth ${Math.max(...ceilingGrowths).toFixed(1)} MB`,
  );
  row(`upload throughput (median of ${ROUNDS})`, `${median(speeds).toFixed(0)} MB/s (${ratio.toFixed(0)} % of disk)`);
  row('upload throughput (each round)', `${speeds.map((s) => s.toFixed(0)).join(', ')} MB/s`);
  row('service CPU per 100 MB upload (median)', `${median(cpu).toFixed(0)} ms (all threads, user + system)`);
  row('service peak RSS growth (max of rounds)', `${Math.max(...growths).toFixed(1)} MB (goal < 30 MB)`);
  row('service peak RSS growth (each round)', `${growths.map((g) => g.toFixed(1)).join(', ')} MB`);
  row('GET / with no upload running (1 s, every 20 ms)', `median ${median(idleLatencies).toFixed(1)} ms, max ${Math.max(...idleLatencies).toFixed(1)} ms`);
  row(
    'GET / during the uploads (every 20 ms)',
    `median ${median(latencies).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length} (goal < 50 ms)`,
  );
  bare.stop();
} finally {
  await service.stop();
  await rm(home, { recursive: true, force: true });
}

/** A plain node:http server that reads and drops the body: no parsing, no disk. */
async function startBareServer(): Promise<{ port: number; pid: number; stop(): void }> {
  const script = `require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('{}')); })
    .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { port, pid: child.pid!, stop: () => child.kill() };
}

async function timedUpload(port: number, pid: number): Promise<{ speed: number; growth: number; cpuMs: number }> {
  const baseline = rssOf(pid);
  const cpuBefore = cpuMsOf(pid);
  const sampler = sampleRss(pid);
  const started = process.hrtime.bigint();
  const res = answered(await upload(port, { parts: [{ name: 'file', filename: 'big.bin', data: generated(SIZE) }] }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const peak = sampler.stop();
  if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${res.text}`);
  return { speed: SIZE / MB / seconds, growth: (peak - baseline) / MB, cpuMs: cpuMsOf(pid) - cpuBefore };
}

/** 100 MB written in 64 KB chunks into `dir`, then fsynced: what the upload path asks of the disk. */
async function diskWriteSpeed(dir: string): Promise<number> {
  const file = path.join(dir, 'disk-speed.tmp');
  const handle = await open(file, 'w');
  const started = process.hrtime.bigint();
  for (const chunk of generated(SIZE).chunks()) await handle.write(chunk);
  await handle.sync();
  await handle.close();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await rm(file);
  return SIZE / MB / seconds;
}

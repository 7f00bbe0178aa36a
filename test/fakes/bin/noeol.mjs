#!/usr/bin/env node
// A program that writes $NOEOL_MB (default 200) megabytes without a single newline to its
// stdout and its stderr, whatever it is asked, then exits 1 (or, with NOEOL_HANG=1, waits to be
// stopped): a stand-in for any program the service runs (agent CLIs, the gateway, gh, rclone)
// going wrong.
const chunk = Buffer.alloc(1024 * 1024, 0x61);
const total = Number(process.env.NOEOL_MB ?? 200);
const pump = (stream) => new Promise((resolve) => {
  let sent = 0;
  const next = () => {
    while (sent < total) {
      sent++;
      if (!stream.write(chunk)) return void stream.once('drain', next);
    }
    resolve();
  };
  stream.on('error', resolve);
  next();
});
await Promise.all([pump(process.stdout), pump(process.stderr)]);
if (process.env.NOEOL_HANG === '1') setInterval(() => undefined, 1 << 30);
else process.exitCode = 1;

/** Polls until `check` passes (every `stepMs`); fails with its last error after `ms`. */
export async function eventually(check: () => Promise<void>, ms = 20_000, stepMs = 25): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, stepMs));
    }
  }
}

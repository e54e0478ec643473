// The `business-payments` executable: process wiring around `main`.
import { main } from './index.js';

const controller = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // A second Ctrl+C while closing stops at once.
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  });
}

const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, signal: controller.signal });
process.exitCode = code;
// Whatever a command left open (a keep-alive socket) must not keep the process alive.
setTimeout(() => process.exit(code), 2_000).unref();

// The `business-payments` executable: process wiring around `main`.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { main } from './main.js';

// `sandbox` is left running for days, so its service runs in a worker thread with its own
// V8 heap limits (measured by `npm run soak`, see docs/testing.md):
// - young generation 12 MB: under load V8 otherwise grows it to 2 × 64 MB and keeps the
//   pages; scavenges of a small one cost little, since a request's garbage dies young;
// - old generation 1 GB: V8 sizes its first full collections from this cap, so the heap
//   settles near what the bounded stores hold (with the default multi-GB cap the first one
//   waits until ~40 MB). The stores' caps keep the live data far below it.
const SANDBOX_YOUNG_GENERATION_MB = 12;
const SANDBOX_OLD_GENERATION_MB = 1024;
const WORKER_ROLE = 'business-payments-sandbox';

if (!isMainThread && (workerData as { role?: string } | null)?.role === WORKER_ROLE) {
  await runInWorker();
} else if (process.argv[2] === 'sandbox') {
  await runSandboxWorker();
} else {
  const controller = abortOnSignals();
  const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, signal: controller.signal });
  exitSoon(code);
}

function abortOnSignals(onAbort?: () => void): AbortController {
  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      // A second Ctrl+C while closing stops at once.
      if (controller.signal.aborted) process.exit(130);
      controller.abort();
      onAbort?.();
    });
  }
  return controller;
}

function exitSoon(code: number): void {
  process.exitCode = code;
  // Whatever a command left open (a keep-alive socket) must not keep the process alive.
  setTimeout(() => process.exit(code), 2_000).unref();
}

/** Main thread: starts the worker, passes Ctrl+C on as 'stop', exits with its code. */
async function runSandboxWorker(): Promise<void> {
  const worker = new Worker(new URL(import.meta.url), {
    argv: process.argv.slice(2),
    workerData: { role: WORKER_ROLE },
    resourceLimits: { maxYoungGenerationSizeMb: SANDBOX_YOUNG_GENERATION_MB, maxOldGenerationSizeMb: SANDBOX_OLD_GENERATION_MB },
  });
  abortOnSignals(() => worker.postMessage('stop'));
  let code = 1;
  worker.on('message', (message: { code?: number }) => {
    if (typeof message.code === 'number') code = message.code;
  });
  const exited = await new Promise<number>((resolve) => {
    worker.once('error', (error: Error & { code?: string }) => {
      const reason =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the service ran out of its ${SANDBOX_OLD_GENERATION_MB} MB heap (${error.message}); restart it`
          : error.message;
      process.stderr.write(`business-payments sandbox: ${reason}\n`);
      code = 1;
    });
    worker.once('exit', resolve);
  });
  exitSoon(exited === 0 ? code : exited || 1);
}

/** Worker thread: the command itself; its stdout and stderr go through the main thread. */
async function runInWorker(): Promise<void> {
  const controller = new AbortController();
  parentPort?.on('message', (message) => {
    if (message === 'stop') controller.abort();
  });
  const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, signal: controller.signal });
  parentPort?.postMessage({ code });
  // The port (and any keep-alive socket) would keep the thread alive. Deno's port has no
  // close(); there the timer below ends the thread.
  const port = parentPort as { close?: () => void } | null;
  if (typeof port?.close === 'function') port.close();
  setTimeout(() => process.exit(code), 2_000).unref();
}

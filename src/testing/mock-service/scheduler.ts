// Timed work of the simulation (push answers, webhook attempts, payout settlement, billing
// renewals) on the service's clock. With autoRun each task also gets a real timer (unref'd,
// so it never keeps Node alive); `runDue()` runs whatever is due at now() either way, and a
// test clock (`createMockService({ clock })`) runs it at each due time as it advances.

interface Task {
  seq: number;
  dueAt: number;
  label: string;
  run: () => Promise<void> | void;
  timer?: ReturnType<typeof setTimeout>;
}

const MAX_TIMER_MS = 2_147_483_647;

export class Scheduler {
  readonly #tasks = new Set<Task>();
  readonly #now: () => number;
  readonly #autoRun: boolean;
  #seq = 0;
  #closed = false;

  constructor(now: () => number, autoRun: boolean) {
    this.#now = now;
    this.#autoRun = autoRun;
  }

  /** Runs `run` at clock time `dueAt` (ms). */
  at(dueAt: number, label: string, run: () => Promise<void> | void): void {
    if (this.#closed) return;
    const task: Task = { seq: this.#seq++, dueAt, label, run };
    this.#tasks.add(task);
    if (this.#autoRun) this.#arm(task, Math.max(0, dueAt - this.#now()));
  }

  // setTimeout holds at most 2^31-1 ms (about 24.8 days): longer waits go in steps.
  #arm(task: Task, delay: number): void {
    const step = Math.min(delay, MAX_TIMER_MS);
    const timer = setTimeout(() => {
      if (!this.#tasks.has(task)) return;
      if (delay > MAX_TIMER_MS) return this.#arm(task, delay - MAX_TIMER_MS);
      this.#tasks.delete(task);
      void this.#execute(task);
    }, step);
    (timer as { unref?: () => void }).unref?.();
    task.timer = timer;
  }

  /** Runs `run` `delayMs` from now. */
  after(delayMs: number, label: string, run: () => Promise<void> | void): void {
    this.at(this.#now() + delayMs, label, run);
  }

  /** Runs every task due at now(), earliest first, including tasks they schedule that are due too. */
  async runDue(): Promise<void> {
    for (;;) {
      if (this.#closed) return;
      const now = this.#now();
      let next: Task | undefined;
      for (const task of this.#tasks) {
        if (task.dueAt <= now && (!next || task.dueAt < next.dueAt || (task.dueAt === next.dueAt && task.seq < next.seq))) next = task;
      }
      if (!next) break;
      this.#tasks.delete(next);
      if (next.timer !== undefined) clearTimeout(next.timer);
      await this.#execute(next);
    }
  }

  /** The earliest due time of the tasks still waiting (a test clock steps to it), `undefined` when none waits. */
  nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const task of this.#tasks) if (next === undefined || task.dueAt < next) next = task.dueAt;
    return next;
  }

  /** Labels and due times of the tasks still waiting (for inspection). */
  pending(): Array<{ label: string; dueAt: number }> {
    return [...this.#tasks].sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq).map(({ label, dueAt }) => ({ label, dueAt }));
  }

  /** Drops every waiting task and timer; nothing is scheduled afterwards. */
  close(): void {
    this.#closed = true;
    for (const task of this.#tasks) if (task.timer !== undefined) clearTimeout(task.timer);
    this.#tasks.clear();
  }

  get closed(): boolean {
    return this.#closed;
  }

  async #execute(task: Task): Promise<void> {
    try {
      await task.run();
    } catch {
      // A task handles its own failures; one that throws must not stop the others.
    }
  }
}

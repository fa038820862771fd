// One execution at a time in a child process with a deadline. A fuzz input
// that makes the code under test loop forever, block inside SQLite or eat
// all memory must become a failure of that input, not a fuzzer that never
// ends: the process is killed at the deadline (or dies of its heap limit)
// and the next execution starts a fresh one. A process, not a worker
// thread: a thread stuck in native code (a SQLite query) cannot be
// stopped, and it may hold a lock the next worker's start-up waits for.
// The child imports `handler` (a module exporting `handle(input)`) once
// and answers one message per execution (sandbox-child.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type SandboxAnswer<R> =
  | { kind: 'answer'; value: R }
  /** No answer within the deadline: the process was killed. */
  | { kind: 'hang'; ms: number }
  /** The process died (out of memory, a native crash, an uncaught exception). */
  | { kind: 'died'; message: string };

export interface SandboxOptions {
  /** Per execution. */
  timeoutMs: number;
  /** The child's old-generation heap (MB): runaway memory is a failure, not a machine that swaps. */
  memoryMb?: number;
  /** Passed (as JSON) to the handler's `setup(options)` once per process, before its first input; what it returns is `ready()`'s value. */
  setup?: unknown;
}

/** How long a fresh process may take to load the handler and set up. */
const START_TIMEOUT_MS = 60_000;

interface Child {
  process: ChildProcess;
  ready: Promise<unknown>;
  /** Settles the execution in flight (one at a time). */
  settle: ((a: SandboxAnswer<unknown>) => void) | null;
  stderr: string;
}

export class Sandbox<I, R> {
  readonly #handler: URL;
  readonly #options: SandboxOptions;
  #child: Child | null = null;

  constructor(handler: URL, options: SandboxOptions) {
    this.#handler = handler;
    this.#options = options;
  }

  #start(): Child {
    const proc = fork(fileURLToPath(new URL('./sandbox-child.ts', import.meta.url)), [], {
      execArgv: [`--max-old-space-size=${this.#options.memoryMb ?? 1536}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: { ...process.env, STREAMSCOPE_FUZZ_HANDLER: this.#handler.href, STREAMSCOPE_FUZZ_SETUP: JSON.stringify(this.#options.setup ?? null) },
    });
    const child: Child = { process: proc, ready: null as unknown as Promise<unknown>, settle: null, stderr: '' };
    // The last of what it printed: why it died, when it does.
    proc.stderr!.on('data', (d: Buffer) => (child.stderr = (child.stderr + d.toString()).slice(-2000)));
    child.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fuzz handler ${this.#handler.pathname} did not start in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      proc.on('message', (m: { ready?: boolean; setupValue?: unknown; setupError?: string; answer?: unknown }) => {
        if (m.setupError) {
          clearTimeout(timer);
          reject(new Error(`fuzz handler ${this.#handler.pathname} failed to start: ${m.setupError}`));
        } else if (m.ready) {
          clearTimeout(timer);
          resolve(m.setupValue);
        } else if ('answer' in m) child.settle?.({ kind: 'answer', value: m.answer });
      });
      proc.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (this.#child === child) this.#child = null;
        const why = signal ? `killed by ${signal}` : `exited with code ${code}`;
        const last = child.stderr.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
        reject(new Error(`fuzz handler ${this.#handler.pathname} ${why} while starting: ${last}`));
        child.settle?.({ kind: 'died', message: `${why}${last ? `: ${last.slice(0, 300)}` : ''}` });
      });
      proc.on('error', () => {}); // 'exit' follows and says it
    });
    child.ready.catch(() => {});
    this.#child = child;
    return child;
  }

  /** What the handler's setup returned (a started server's address, ...), starting the process if needed. */
  async ready(): Promise<unknown> {
    return (this.#child ?? this.#start()).ready;
  }

  async run(input: I): Promise<SandboxAnswer<R>> {
    const child = this.#child ?? this.#start();
    await child.ready;
    const started = performance.now();
    return new Promise<SandboxAnswer<R>>((resolve) => {
      const timer = setTimeout(() => {
        settle({ kind: 'hang', ms: Math.round(performance.now() - started) });
        this.#kill(child);
      }, this.#options.timeoutMs);
      const settle = (a: SandboxAnswer<unknown>) => {
        clearTimeout(timer);
        child.settle = null;
        resolve(a as SandboxAnswer<R>);
      };
      child.settle = settle;
      child.process.send({ input });
    });
  }

  #kill(child: Child): void {
    if (this.#child === child) this.#child = null;
    child.process.kill('SIGKILL');
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#child = null;
    if (child.process.exitCode !== null || child.process.signalCode !== null) return;
    const exited = new Promise((r) => child.process.once('exit', r));
    // A handler's teardown (a server to close) gets a moment; then the process goes.
    if (child.process.connected) child.process.send({ close: true });
    const timer = setTimeout(() => child.process.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  }
}

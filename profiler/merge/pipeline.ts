// Two cores for one large merge. SQLite writes a file from one thread, and
// rewriting a row (reading its columns, moving its ids and times, encoding
// it again) costs about twice what moving a finished row across costs
// (SQLite's transfer copy, `INSERT INTO t SELECT * FROM other.t`, which
// copies the stored record as it is). So a worker thread (bulk-worker.ts)
// rewrites the big tables of most inputs ahead, each into a scratch
// recording beside the output, while the merging thread copies the others
// itself and moves the worker's finished rows into the output: the output
// is written as before, input after input, and each row still ends up
// exactly where the plan (plan.ts) put it.
//
// The threads coordinate through shared memory (pipeline-shared.ts), so the
// merge stays one synchronous call: an input is claimed by whichever thread
// starts it; the merging thread, reaching an input nobody has started (the
// worker is behind, busy elsewhere on a loaded machine, or failed), copies
// it itself — unless told to wait for the worker (`steal: false`, for the
// tests, which want the worker's rows whatever the timing). Without the
// worker's module beside this one (a bundled build), there is no worker:
// one thread.
//
// Memory is the other cost. The output's pages are new page cache, and on
// a virtual machine whose host takes freed memory back, each first touch of
// a page costs more than the copy into it (the 2-core development VM: about
// 2 s per GB, 14 s of a 64-rank merge's commits). So once the merging
// thread has read a scratch, the file is emptied before the output's pages
// are written (recycle): its pages, just freed, are the ones the commit
// takes; the worker starts each input in a fresh copy of an empty scratch
// recording, paying the first touches itself, on the other core.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { beginBulkLoad, createRecording } from '../store/database.ts';
import { JobState, type BulkJob, type PipelineShared } from './pipeline-shared.ts';

/** Scratch recordings: the worker may be this many inputs ahead of the merging thread. */
const SCRATCH_FILES = 3;

/** Without stealing, how long an input may wait for the worker to start it before this thread does (a worker that never started). */
const START_TIMEOUT_MS = 30_000;

export class BulkPipeline {
  readonly #worker: Worker;
  readonly #scratch: string[];
  readonly #claims: Int32Array;
  readonly #states: Int32Array;
  readonly #slots: Int32Array;
  readonly #control: Int32Array;
  readonly #steal: boolean;

  /** Starts the worker on `jobs` (each input's big tables; inputs without one are the merging thread's); null when it cannot run here. */
  static start(partial: string, inputs: number, jobs: BulkJob[], steal = true): BulkPipeline | null {
    const entry = new URL('./bulk-worker.ts', import.meta.url);
    if (jobs.length === 0 || entry.protocol !== 'file:' || !fs.existsSync(fileURLToPath(entry))) return null;
    const scratch = Array.from({ length: SCRATCH_FILES }, (_, i) => `${partial}.scratch-${i}`);
    const template = `${partial}.scratch-template`;
    scratch.push(template);
    try {
      const db = createRecording(template, { overwrite: true });
      try {
        beginBulkLoad(db); // no secondary index to keep up while rows go in
      } finally {
        db.close();
      }
    } catch (err) {
      fs.rmSync(template, { force: true });
      throw err;
    }
    const shared: PipelineShared = {
      claims: new SharedArrayBuffer(4 * inputs),
      states: new SharedArrayBuffer(4 * inputs),
      slots: new SharedArrayBuffer(4 * SCRATCH_FILES),
      control: new SharedArrayBuffer(8),
    };
    // Inputs without a job are this thread's from the start.
    const claims = new Int32Array(shared.claims).fill(2);
    for (const job of jobs) claims[job.index] = 0;
    const worker = new Worker(entry, { workerData: { jobs, scratch: scratch.slice(0, SCRATCH_FILES), template, shared } });
    // Its failures are handled through the shared state (the merging thread redoes the input); it keeps no process alive.
    worker.on('error', () => {});
    worker.unref();
    return new BulkPipeline(worker, scratch, shared, steal);
  }

  private constructor(worker: Worker, scratch: string[], shared: PipelineShared, steal: boolean) {
    this.#steal = steal;
    this.#worker = worker;
    this.#scratch = scratch;
    this.#claims = new Int32Array(shared.claims);
    this.#states = new Int32Array(shared.states);
    this.#slots = new Int32Array(shared.slots);
    this.#control = new Int32Array(shared.control);
  }

  /**
   * The scratch recording that holds input `index`'s big tables, rewritten
   * (waits for the worker if it is on them); null: the merging thread
   * copies them itself (nobody had started them, or the worker failed).
   */
  take(index: number): string | null {
    if (Atomics.load(this.#claims, index) === 2) return null;
    if (this.#steal && Atomics.compareExchange(this.#claims, index, 0, 2) === 0) return null;
    const deadline = performance.now() + START_TIMEOUT_MS;
    for (;;) {
      if (performance.now() > deadline && Atomics.compareExchange(this.#claims, index, 0, 2) === 0) return null;
      const state = Atomics.load(this.#states, index);
      if (state >= JobState.Ready) return this.#scratch[state - JobState.Ready]!;
      if (state === JobState.Failed) return null;
      // Ended without finishing what it claimed (it cannot, short of being terminated): redone here.
      if (Atomics.load(this.#control, 1) === 1 && Atomics.load(this.#states, index) === JobState.Pending) return null;
      Atomics.wait(this.#states, index, JobState.Pending, 200);
    }
  }

  /**
   * Input `index`'s rows have been read: its scratch is emptied, so that
   * the pages it held are free when the output's commit needs pages. Still
   * attached, but nothing reads it again before it is detached (SQLite
   * holds only a read lock on it, released at commit, which reads nothing).
   */
  recycle(index: number): void {
    const state = Atomics.load(this.#states, index);
    if (state < JobState.Ready) return;
    try {
      fs.truncateSync(this.#scratch[state - JobState.Ready]!, 0);
    } catch {
      // Only a saving: the pages are freed when the worker replaces the file.
    }
  }

  /** Input `index`'s rows have been moved into the output: its scratch may take the next input. */
  release(index: number): void {
    const state = Atomics.load(this.#states, index);
    if (state < JobState.Ready) return;
    Atomics.store(this.#slots, state - JobState.Ready, 0);
    Atomics.notify(this.#slots, state - JobState.Ready);
  }

  /** Stops the worker and deletes the scratch recordings. */
  close(): void {
    Atomics.store(this.#control, 0, 1);
    for (let i = 0; i < this.#slots.length; i++) Atomics.notify(this.#slots, i);
    void this.#worker.terminate();
    for (const file of this.#scratch) fs.rmSync(file, { force: true });
  }
}

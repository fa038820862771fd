// The what-if estimates of a diagnosis, on this thread or on a second one.
//
// A diagnosis (diagnose.ts) runs its rules, then estimates each fix they
// name by replaying the recording with it (replay/whatif.ts). On a large
// recording those are two long single-threaded stretches: at 10 M
// operations the rules' context and rules ~1.3 s, the what-if's chain —
// the host calls, the host model, the fix's replay — ~2.1 s (2.8 s before
// the replay, the capture and the host model's walk were native). The chain
// needs nothing of the rules but the fix's name, so a second thread can
// build its host model while this one runs the rules, and replay each fix
// as soon as a rule names it: the rules' time is hidden behind the chain's.
//
// The second thread (whatif-worker.ts) is handed the columns this one
// loaded — over SharedArrayBuffers (native/addon.ts
// loadSharedTimelineColumns), so nothing is copied; or, where this thread
// mapped them from the column cache (load/column-cache.ts), the cache
// entry, which it maps in turn: the same pages — and analyses them as
// analyze() does here, scope and all: the same trace and host calls, so the
// same estimates, bit for bit (the tests hold both threads to it). The
// diagnosis stays synchronous: it waits for an estimate on an Atomics
// counter the worker bumps with each answer.
//
// The worker replays (tryPredict); the estimate sets that replay against
// what the recording measured (recordedSpan: a pass over every op, ~60 ms at
// 10 M), which this thread measures while it waits for the replay.
//
// What both threads would make alike before the host model, the start-up
// detected, the call index and each call's outermost call (~0.2 s at 10 M),
// the analysing thread makes (the arrays over shared memory) and hands over
// (handStartup, handHost) as soon as it has the scope; the worker takes
// each where it would make it (HandedOver: it waits up to HANDED_WAIT_MS,
// then makes its own), and its host model begins that much sooner.
//
// Each fix is estimated by whichever thread takes it first (a claim per
// fix, compare-and-swapped in shared memory), but the first named, which is
// the worker's: the worker takes them in the order the rules named them;
// this thread, done with the rules, takes any the worker has not begun, so
// a recording with several fixes has two of them replayed at once. A worker
// that fails (an exception while preparing or replaying) says so in its
// answer; the estimates left are then made here, as without it.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { workerEntry } from '../../base/worker-pool.ts';
import { FIX_IDS, type FixId } from '../../contract/findings.ts';
import type { Scope, Startup } from '../../contract/scope.ts';
import type { TimelineColumns } from '../../native/columns.ts';
import type { Host } from '../host.ts';
import type { Trace } from '../trace.ts';
import type { ReplayResult } from '../replay/replay.ts';
import { estimateOf, tryEstimate, type Estimate, type Prediction, type RecordedSpan } from '../replay/whatif.ts';
import { indexCalls, prefaultHeap, type CallColumns, type CallIndexColumns, type OpColumns } from '../../native/addon.ts';
import { sharedOuterCalls } from '../replay/replay-host.ts';

export type EstimateAnswer = { estimate: Estimate } | { unavailable: string };

/** How a diagnosis gets its fixes' estimates. */
export interface Estimator {
  /** A rule named `fix`: its estimate may begin (on another thread). Each fix once. */
  start(fix: FixId): void;
  /** Before the first result: whether this thread's host model is needed (the diagnosis builds it then, saying so). */
  readonly modelsHere: boolean;
  /** The estimate of `fix` (waiting for it where another thread makes it). */
  result(fix: FixId): EstimateAnswer;
  /** Done: a second thread is ended. */
  close(): void;
}

/** The estimates made here, as each is asked (`replays`: where given, filled with each fix's replay: attribution.ts). */
export function estimatesHere(trace: Trace, host: Host, replays?: Map<FixId, ReplayResult>): Estimator {
  return {
    start() {},
    modelsHere: true,
    // The prediction alone: what the findings carry (not the unchanged replay's span and note, a whole replay more).
    result: (fix) => tryEstimate(trace, host, fix, { replays, unchangedReplay: false }),
    close() {},
  };
}

/**
 * How long the worker may hold a fix without answering before this thread makes it too: a replay of 10 M operations
 * takes ~2 s here, and an answer made twice is the same answer.
 */
const SILENT_MS = 120_000;

/** At least this many operations and calls for a second thread (below, its start costs about what it saves). */
export const WHATIF_THREAD_MIN_ROWS = 2_000_000;

/** A fix's claim (WhatIfThread's `claims`, by its index in FIX_IDS): not taken, taken by the worker, taken here. */
export const Claim = { Free: 0, Worker: 1, Here: 2 } as const;

/**
 * What the worker is sent. `handing`: how long the worker waits for the start-up, call index and outer calls that
 * follow (handStartup, handHost: HANDED_WAIT_MS from analyze()), 0 where none follow.
 */
export type WhatIfRequest =
  | { kind: 'columns'; file: string; columns: HandedColumns; scope: Scope | undefined; pids: number[] | undefined; handing: number }
  | { kind: 'startup'; startup: Startup | null }
  | { kind: 'callIndex'; index: CallIndexColumns }
  | { kind: 'outerCalls'; outer: Int32Array }
  | { kind: 'estimate'; fix: FixId };

/** The columns as handed: in shared memory, or the column cache entry both threads map (never copied). */
export type HandedColumns = TimelineColumns | { cache: NonNullable<TimelineColumns['cache']> };

/** What the analysing thread hands its what-if thread of its own host, taken by the worker's analysis where it would make them. */
export interface Handed {
  /** The recording's start-up as the analysing thread detected it (null: none), or undefined where it did not come. */
  startup(): Startup | null | undefined;
  /** The call index of the scope's ops and calls (indexCalls), or null where it did not come. */
  callIndex(): CallIndexColumns | null;
  /** Each call's outermost call (replay-host.ts outerCalls), or null. */
  outerCalls(): Int32Array | null;
}

/**
 * How long the worker waits for what the analysing thread hands it before it makes its own: that thread makes them
 * ~0.2 s after the load at 10 M operations, as the worker reaches them.
 */
export const HANDED_WAIT_MS = 2000;
/** A fix's replay, or why the fix does not apply (whatif.ts tryPredict). */
export type PredictionAnswer = { prediction: Prediction } | { unavailable: string };
/**
 * What it answers: the replay of a fix it claimed (with, where it was handed any, which its analysis took), or that it
 * failed (then no other answer comes).
 */
export type WhatIfAnswer = { kind: 'prediction'; fix: FixId; answer: PredictionAnswer; took?: Took } | { kind: 'failed'; error: string };

/** Which of what it was handed the worker's analysis took. */
export type Took = { startup: boolean; callIndex: boolean; outerCalls: boolean };

/** What the diagnosing thread holds of its own analysis: its estimates, made here should the worker fail, and its trace's recorded span. */
export interface HereSide {
  estimates(): Estimator;
  recorded(): RecordedSpan;
}

/**
 * Bytes per operation of memory the replay of a fix writes for the first time (its captured calls' timings, each op's
 * dependency edges, start and end: 16 per call and ~28 per op, with the scheduler's own). This thread, done naming the
 * fix and with ~0.5 s to wait at 10 M operations, maps them first (native/addon.ts prefaultHeap): each page the
 * replay would fault on its way costs it ~1 µs on a virtual machine: the replay 0.67 → 0.60 s at 10 M on the development VM.
 */
const REPLAY_BYTES_PER_OP = 48;

/**
 * A worker thread that estimates fixes on the columns it is handed. Started
 * before the load (its modules load meanwhile); handColumns() hands it the
 * columns once loaded; then it is an Estimator, falling back on this
 * thread (its HereSide) should it fail.
 */
export class WhatIfThread implements Estimator {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  /** Answers posted so far: the worker adds 1 to element 0 after each. */
  readonly #posted = new Int32Array(new SharedArrayBuffer(4));
  /** Requests posted so far: this thread adds 1 after each, for a worker waiting for what it is handed (HandedOver). */
  readonly #sent = new Int32Array(new SharedArrayBuffer(4));
  /** Per fix (its index in FIX_IDS), who estimates it (Claim). */
  readonly #claims = new Int32Array(new SharedArrayBuffer(4 * FIX_IDS.length));
  /** Each answer, and which thread made it. */
  readonly #answers = new Map<FixId, { answer: EstimateAnswer; by: 'worker' | 'here' }>();
  readonly #started = new Set<FixId>();
  #failed: string | null = null;
  #here: Estimator | null = null;
  #hereSide: HereSide | null = null;
  /** The operations handed over (what the replay's pages are sized by). */
  #ops = 0;
  readonly modelsHere = false;

  constructor() {
    this.#worker = new Worker(workerEntry('whatif-worker', import.meta.url));
    // Never what keeps a process alive: a diagnosis ends it (close), and one never asked for leaves it idle.
    this.#worker.unref();
    // A worker that could not start or died (read when this thread next waits, or after the diagnosis): its fixes are
    // made here; the error is not the process's.
    this.#worker.on('error', (err) => {
      this.#failed ??= err.message;
    });
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#worker.postMessage({ port: port2, posted: this.#posted, sent: this.#sent, claims: this.#claims }, [port2]);
  }

  #send(request: WhatIfRequest): void {
    this.#port.postMessage(request);
    Atomics.add(this.#sent, 0, 1);
    Atomics.notify(this.#sent, 0);
  }

  /**
   * The loaded columns (over shared memory: not copied), the scope and processes analysed, and this thread's side;
   * `handing`, where the start-up, call index and outer calls follow (handStartup, handHost), how long the worker waits.
   */
  handColumns(request: Omit<Extract<WhatIfRequest, { kind: 'columns' }>, 'kind' | 'columns'> & { columns: TimelineColumns }, here: HereSide): void {
    this.#hereSide = here;
    const { columns } = request;
    this.#ops = columns.ops.length;
    // Mapped from the cache: the entry, which the worker maps (a column over memory of this thread's own would be copied).
    this.#send({ kind: 'columns', ...request, columns: columns.cache ? { cache: columns.cache } : columns });
  }

  /**
   * The call index and outer calls of the scope's `ops` and `calls`, made over shared memory (indexCalls `shared`,
   * replay-host.ts sharedOuterCalls) and handed over: this thread's own, for its host (analyze.ts).
   */
  handHost(ops: Pick<OpColumns, 'length' | 'pid' | 'correlation'>, calls: CallColumns): { index: CallIndexColumns; outer: Int32Array } {
    // The index handed first: the worker needs it first.
    const index = indexCalls(calls, ops, true);
    this.#send({ kind: 'callIndex', index });
    const outer = sharedOuterCalls(calls, index);
    this.#send({ kind: 'outerCalls', outer });
    return { index, outer };
  }

  /** The start-up this thread detected (analyze.ts: the worker selects the same steady state without detecting it). */
  handStartup(startup: Startup | null): void {
    this.#send({ kind: 'startup', startup });
  }

  start(fix: FixId): void {
    if (this.#started.has(fix)) return;
    // The first fix named is the worker's from the start: it builds the host model while the rules run, and this thread,
    // to make that fix, would build one of its own (~1 s at 10 M operations), not sooner. Left free, it went to this
    // thread whenever the rules ended before the worker read its message (the worker still preparing its replays):
    // 4.4 → 5.6 s at 10 M. The fixes named after it stay free, for this thread to take those the worker has not begun.
    if (this.#started.size === 0) Atomics.compareExchange(this.#claims, FIX_IDS.indexOf(fix), Claim.Free, Claim.Worker);
    this.#started.add(fix);
    this.#send({ kind: 'estimate', fix });
    // The first fix named: its replay's pages mapped now, before the worker, ready soon after, writes them.
    if (this.#started.size === 1) prefaultHeap(REPLAY_BYTES_PER_OP * this.#ops);
  }

  result(fix: FixId): EstimateAnswer {
    this.start(fix);
    for (;;) {
      const known = this.#answers.get(fix);
      if (known) return known.answer;
      if (this.#failed !== null) return this.#made(fix, this.#estimatesHere().result(fix), 'here');
      const seen = Atomics.load(this.#posted, 0);
      const message = receiveMessageOnPort(this.#port);
      if (message) {
        this.#take(message.message as WhatIfAnswer);
        continue;
      }
      // Not answered yet: a fix the worker has not begun (this one first, else the next named) is made here meanwhile;
      // with none left, sleep until the worker posts again (its count moves past `seen`), or a second passes.
      const free = [fix, ...this.#started].find((f) => !this.#answers.has(f) && this.#claim(f));
      if (free) this.#made(free, this.#estimatesHere().result(free), 'here');
      else {
        // The recorded span the answer is set against, measured before the first wait (once: recordedSpan keeps it).
        this.#hereSide?.recorded();
        if (Atomics.wait(this.#posted, 0, seen, 1000) === 'timed-out' && this.#silent(seen)) {
          // A worker that died while it held a fix (its 'error' cannot be told while this thread waits): the rest here.
          this.#failed = `the what-if thread answered nothing for ${SILENT_MS / 1000} s`;
        }
      }
    }
  }

  /** When the worker's answer count last moved, and to what. */
  #lastPosted = { count: 0, at: performance.now() };

  /** Whether the worker has posted nothing since `seen` for SILENT_MS. */
  #silent(seen: number): boolean {
    const now = performance.now();
    if (seen !== this.#lastPosted.count) this.#lastPosted = { count: seen, at: now };
    return now - this.#lastPosted.at > SILENT_MS;
  }

  /** Takes `fix` for this thread, if the worker has not. */
  #claim(fix: FixId): boolean {
    return Atomics.compareExchange(this.#claims, FIX_IDS.indexOf(fix), Claim.Free, Claim.Here) === Claim.Free;
  }

  close(): void {
    this.#port.close();
    void this.#worker.terminate();
  }

  #take(a: WhatIfAnswer): void {
    if (a.kind === 'prediction' && a.took) this.#took = a.took;
    if (a.kind !== 'prediction') this.#failed = a.error;
    else if ('unavailable' in a.answer) this.#made(a.fix, a.answer, 'worker');
    else this.#made(a.fix, { estimate: estimateOf(this.#hereSide!.recorded(), a.answer.prediction) }, 'worker');
  }

  #made(fix: FixId, answer: EstimateAnswer, by: 'worker' | 'here'): EstimateAnswer {
    this.#answers.set(fix, { answer, by });
    return answer;
  }

  #estimatesHere(): Estimator {
    if (!this.#here) {
      if (!this.#hereSide) throw new Error(`the what-if thread failed before it was handed the columns: ${this.#failed}`);
      this.#here = this.#hereSide.estimates();
    }
    return this.#here;
  }

  /** Why the worker failed, or null. */
  get failure(): string | null {
    return this.#failed;
  }

  /** The fixes estimated so far, by the thread that made each (asked by result()). */
  estimatedBy(): { worker: FixId[]; here: FixId[] } {
    const by = (thread: 'worker' | 'here') => [...this.#answers].filter(([, a]) => a.by === thread).map(([fix]) => fix);
    return { worker: by('worker'), here: by('here') };
  }

  /** Which of what it was handed (start-up, call index, outer calls) the worker's analysis took (null: not said yet). */
  handedTaken(): Took | null {
    return this.#took;
  }
  #took: Took | null = null;

  /** How many answers the worker has posted (read or not). */
  answersPosted(): number {
    return Atomics.load(this.#posted, 0);
  }
}

type Handing = 'startup' | 'callIndex' | 'outerCalls';

/**
 * The worker's side of what the analysing thread hands it (Handed), read off its port while its analysis runs: each
 * taken when first asked, waiting for it up to the request's `handing` ms. The requests met meanwhile (the fixes named)
 * are kept, in order, for the worker to answer after (`pending`).
 */
export class HandedOver implements Handed {
  readonly #port: MessagePort;
  readonly #sent: Int32Array;
  readonly #waitMs: number;
  readonly #got = new Map<Handing, WhatIfRequest>();
  readonly pending: WhatIfRequest[] = [];
  /** Which it took (the worker says so with its first answer). */
  readonly took: Took = { startup: false, callIndex: false, outerCalls: false };

  constructor(port: MessagePort, sent: Int32Array, waitMs: number) {
    this.#port = port;
    this.#sent = sent;
    this.#waitMs = waitMs;
  }

  startup(): Startup | null | undefined {
    return this.#take('startup')?.startup;
  }

  callIndex(): CallIndexColumns | null {
    return this.#take('callIndex')?.index ?? null;
  }

  outerCalls(): Int32Array | null {
    return this.#take('outerCalls')?.outer ?? null;
  }

  /** The request of `kind`, noted as taken, or null where it did not come in time. */
  #take<K extends Handing>(kind: K): Extract<WhatIfRequest, { kind: K }> | null {
    const r = this.#wait(kind) as Extract<WhatIfRequest, { kind: K }> | null;
    this.took[kind] = r !== null;
    return r;
  }

  #wait(kind: Handing): WhatIfRequest | null {
    const until = performance.now() + this.#waitMs;
    for (;;) {
      const got = this.#got.get(kind);
      if (got) return got;
      const seen = Atomics.load(this.#sent, 0);
      const m = receiveMessageOnPort(this.#port);
      if (m) {
        const r = m.message as WhatIfRequest;
        if (r.kind === 'startup' || r.kind === 'callIndex' || r.kind === 'outerCalls') this.#got.set(r.kind, r);
        else this.pending.push(r);
        continue;
      }
      const left = until - performance.now();
      if (left <= 0) return null;
      Atomics.wait(this.#sent, 0, seen, left);
    }
  }
}

// The order in which browser mode computes its answers, and the answers it
// no longer needs to compute.
//
// The server's thread answers windows, searches and summaries itself, each
// synchronously (better-sqlite3): under load, requests wait for it. A
// request whose client has gone (a closed tab, a fetch the page aborted, a
// view panned past before its window came) must not be computed when its
// turn comes. Node learns that a client has gone only when it reads the
// socket's end, in the poll phase of its event loop, and it reads a
// connection's end one turn of the loop after the request that came with
// it (measured: a request and the end of its connection in the kernel's
// buffer together are read in two turns). So work starts in a turn of its
// own (setImmediate: after a poll phase), never in the turn its request
// arrived in, and whether it is still wanted is asked just before.
//
// The analysis methods are computed on the analysis thread, one at a time:
// posted there at once, a request would be analysed even after its client
// went. They wait here instead, at most `concurrency` on the thread (two:
// one running, the next ready), and are dropped as the others are.
//
// Waiting requests are bounded by the open connections: Node reads a
// connection's next request only once its previous answer is sent.

/** What `run` resolves with when the work was dropped: the client had gone. */
export const DROPPED: unique symbol = Symbol('dropped');

interface Waiting {
  /** False in the turn the request arrived in (the end of its connection, if sent, is read in the next). */
  ready: boolean;
  work: () => unknown;
  wanted: () => boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class WorkQueue {
  readonly #concurrency: number;
  readonly #waiting: Waiting[] = [];
  #head = 0;
  #running = 0;
  #scheduled = false;
  /** Work dropped because its client had gone, since the queue was made. */
  dropped = 0;

  constructor(concurrency: number) {
    this.#concurrency = concurrency;
  }

  /** Requests waiting for their turn. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  /**
   * Runs `work` in its turn (first come, first served), or drops it
   * unstarted when `wanted()` says no by then. Resolves with its value (a
   * promise it returns, settled), or DROPPED; rejects with what it threw.
   */
  run<T>(work: () => T | Promise<T>, wanted: () => boolean): Promise<Awaited<T> | typeof DROPPED> {
    return new Promise((resolve, reject) => {
      const w: Waiting = { ready: false, work, wanted, resolve: resolve as (v: unknown) => void, reject };
      this.#waiting.push(w);
      setImmediate(() => {
        w.ready = true;
        this.#schedule();
      });
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#running >= this.#concurrency || this.waiting === 0 || !this.#waiting[this.#head]!.ready) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#startOne();
      this.#schedule();
    });
  }

  /** Starts the first waiting work still wanted; drops those before it that are not. */
  #startOne(): void {
    while (this.waiting > 0 && this.#waiting[this.#head]!.ready) {
      const w = this.#waiting[this.#head]!;
      this.#waiting[this.#head++] = undefined as never;
      if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
        this.#waiting.splice(0, this.#head);
        this.#head = 0;
      }
      if (!w.wanted()) {
        this.dropped++;
        w.resolve(DROPPED);
        continue;
      }
      this.#running++;
      const finished = () => {
        this.#running--;
        this.#schedule();
      };
      try {
        Promise.resolve(w.work()).then(
          (v) => {
            finished();
            w.resolve(v);
          },
          (e: unknown) => {
            finished();
            w.reject(e);
          },
        );
      } catch (e) {
        finished();
        w.reject(e);
      }
      return;
    }
  }
}

// The order in which browser mode computes its answers, the answers it no
// longer needs to compute, and how many may wait.
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
// Turns go round the clients (the server names a client by its address):
// each client with work waiting has one started in its turn, its own in the
// order they came. A client that sends ten thousand requests delays
// another's next one by at most one of its own, not by all of them. Waiting
// is bounded: Node reads a connection's pipelined requests while the first
// is unanswered (measured: 100 requests written at once on one connection
// were all emitted before the first answer), so one connection could queue
// any number. Past `perClient` waiting for one client, or `all` in the
// queue, run() rejects with QueueFull at once (the server answers 429 or
// 503 with Retry-After), nothing computed.

/** What `run` resolves with when the work was dropped: the client had gone. */
export const DROPPED: unique symbol = Symbol('dropped');

/** Requests one client may have waiting in one queue, at most (the page has a few at once; 200 load-test clients from one address, 200). */
export const MAX_WAITING_PER_CLIENT = 256;
/** Requests waiting in one queue, at most, all clients together. */
export const MAX_WAITING = 4096;

/** Why run() refused work: the client's share of the queue, or the whole queue, is full. */
export class QueueFull extends Error {
  readonly scope: 'client' | 'all';
  constructor(scope: 'client' | 'all', limit: number) {
    super(
      scope === 'client'
        ? `too many requests waiting from this client (${limit}): try again when its earlier ones are answered`
        : `the server has ${limit} requests waiting: try again in a moment`,
    );
    this.name = 'QueueFull';
    this.scope = scope;
  }
}

interface Waiting {
  /** False in the turn the request arrived in (the end of its connection, if sent, is read in the next). */
  ready: boolean;
  work: () => unknown;
  wanted: () => boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** One client's waiting work, first come first. */
class ClientQueue {
  readonly items: Waiting[] = [];
  head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  shift(): Waiting {
    const w = this.items[this.head]!;
    this.items[this.head++] = undefined as never;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    return w;
  }
}

export class WorkQueue {
  readonly #concurrency: number;
  readonly #perClient: number;
  readonly #all: number;
  /** Waiting work by client; Map order is the round of turns (a client served goes to the back). */
  readonly #clients = new Map<string, ClientQueue>();
  #waiting = 0;
  /** Of those, the ones whose turn of arrival has passed. */
  #ready = 0;
  #running = 0;
  #scheduled = false;
  /** Work dropped because its client had gone, since the queue was made. */
  dropped = 0;
  /** Work refused because a queue was full (QueueFull), since the queue was made. */
  refused = 0;

  constructor(concurrency: number, limits: { perClient?: number; all?: number } = {}) {
    this.#concurrency = concurrency;
    this.#perClient = limits.perClient ?? MAX_WAITING_PER_CLIENT;
    this.#all = limits.all ?? MAX_WAITING;
  }

  /** Requests waiting for their turn. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * Runs `work` in `client`'s turn (its own work first come, first
   * served), or drops it unstarted when `wanted()` says no by then.
   * Resolves with its value (a promise it returns, settled), or DROPPED;
   * rejects with what it threw, or at once with QueueFull.
   */
  run<T>(work: () => T | Promise<T>, wanted: () => boolean, client = ''): Promise<Awaited<T> | typeof DROPPED> {
    return new Promise((resolve, reject) => {
      let q = this.#clients.get(client);
      if (this.#waiting >= this.#all) return this.#refuse(reject, new QueueFull('all', this.#all));
      if (q && q.length >= this.#perClient) return this.#refuse(reject, new QueueFull('client', this.#perClient));
      if (!q) this.#clients.set(client, (q = new ClientQueue()));
      const w: Waiting = { ready: false, work, wanted, resolve: resolve as (v: unknown) => void, reject };
      q.items.push(w);
      this.#waiting++;
      setImmediate(() => {
        w.ready = true;
        this.#ready++;
        this.#schedule();
      });
    });
  }

  #refuse(reject: (err: unknown) => void, err: QueueFull): void {
    this.refused++;
    reject(err);
  }

  #schedule(): void {
    if (this.#scheduled || this.#running >= this.#concurrency || this.#ready === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#startOne();
      this.#schedule();
    });
  }

  /**
   * Starts the next client's first waiting work still wanted (dropping
   * those before it that are not); that client goes to the back of the
   * round. A client whose work came in this turn is passed over until the
   * next.
   */
  #startOne(): void {
    // Each client once at most: the round is as long as the clients waiting when it starts.
    for (let n = this.#clients.size; n > 0 && this.#waiting > 0; n--) {
      const [client, q] = this.#clients.entries().next().value as [string, ClientQueue];
      this.#clients.delete(client);
      let next: Waiting | null = null;
      // Work no one wants any more is dropped without using up its client's turn.
      while (q.length > 0 && q.items[q.head]!.ready) {
        const w = q.shift();
        this.#waiting--;
        this.#ready--;
        if (w.wanted()) {
          next = w;
          break;
        }
        this.dropped++;
        w.resolve(DROPPED);
      }
      if (q.length > 0) this.#clients.set(client, q);
      if (next) return this.#start(next);
    }
  }

  #start(w: Waiting): void {
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
  }
}

// How many connections browser mode holds, and which goes when there are
// too many.
//
// Every open connection costs a file descriptor and some memory, and the
// process has a fixed number of descriptors (`ulimit -n`): ~20,000 clients
// that connect and send nothing (or a header a byte at a time) held the
// server's once, so that it answered no one for over two minutes. So at
// most `max` connections are held, at most `perClient` of them from one
// client (an address). One more that comes takes the place of:
//
//   - the connection that has waited longest for a request — one that sent
//     nothing yet, half a header, or is idle between two requests
//     (keep-alive) — of its own client when that client holds its share,
//     else of anyone's. Such a connection costs its client nothing to open
//     again, while holding it is how a flood of them locks everyone out;
//   - when every connection held is busy with a request (being read,
//     computed or sent): the newest of the client that holds the most, if
//     that is more than the new one's client would hold with it (its
//     request is not answered: the client with the most connections gives
//     way to one with fewer); else the new connection is closed at once.
//
// So one client, or a few, flooding with connections of any kind leave room
// for the others: a page's request goes out as soon as its connection is
// open, and its client holds fewer than the flood's.
//
// Node's own timeouts (server.ts) close what waits too long regardless:
// no request header within HEADERS_TIMEOUT_MS, no whole request within
// REQUEST_TIMEOUT_MS, nothing on an idle keep-alive connection within
// KEEP_ALIVE_TIMEOUT_MS.
import type http from 'node:http';
import type { Socket } from 'node:net';

/** Connections held at most (`serve` holds this many; a page uses six). */
export const MAX_CONNECTIONS = 1024;
/** Connections held from one client (address) at most: the load benchmark's 200 clients on one machine fit. */
export const MAX_CONNECTIONS_PER_CLIENT = 256;
/**
 * How long a connection waits for a request before it may be closed to make
 * room: a page's request is on its way with its connection, but under load
 * the server reads it a few turns of the event loop after accepting it, and
 * a connection closed before that was a page's request lost (measured:
 * three in four, under 10,000 requests in parallel).
 */
export const EVICTABLE_AFTER_MS = 1000;

interface Held {
  client: string;
  /** Requests read and not yet answered (pipelined ones count: Node reads them before the first is answered). */
  busy: number;
}

export class ConnectionLimit {
  readonly #max: number;
  readonly #perClient: number;
  readonly #held = new Map<Socket, Held>();
  /** Held connections by client, in the order they came. */
  readonly #byClient = new Map<string, Set<Socket>>();
  /** Connections waiting for a request, longest first (Map order: one that starts waiting again goes last), and since when. */
  readonly #waiting = new Map<Socket, number>();
  /** Connections closed at once (no room), and held ones closed to make room, so far. */
  refused = 0;
  evicted = 0;

  constructor(server: http.Server, limits: { max?: number; perClient?: number } = {}) {
    this.#max = limits.max ?? MAX_CONNECTIONS;
    this.#perClient = Math.min(this.#max, limits.perClient ?? MAX_CONNECTIONS_PER_CLIENT);
    server.on('connection', (socket: Socket) => this.#connected(socket));
    // Before the server's own handler, which may answer (and finish) at once.
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => this.#request(req.socket, res));
  }

  /** Connections held now. */
  get open(): number {
    return this.#held.size;
  }

  /** Whether a request read on `socket` is not answered yet (its answer being computed, written or queued behind another). */
  answering(socket: Socket): boolean {
    return (this.#held.get(socket)?.busy ?? 0) > 0;
  }

  #connected(socket: Socket): void {
    const client = socket.remoteAddress ?? '';
    const own = this.#byClient.get(client);
    const room = own && own.size >= this.#perClient ? this.#makeRoomIn(own) : this.#held.size >= this.#max ? this.#makeRoom(own?.size ?? 0) : true;
    if (!room) {
      this.refused++;
      socket.destroy();
      return;
    }
    this.#held.set(socket, { client, busy: 0 });
    if (own) own.add(socket);
    else this.#byClient.set(client, new Set([socket]));
    this.#waiting.set(socket, performance.now());
    socket.once('close', () => this.#forget(socket));
  }

  /** Whether `socket` has waited for a request long enough to be closed for room. */
  #evictable(socket: Socket, now: number): boolean {
    const since = this.#waiting.get(socket);
    return since !== undefined && now - since >= EVICTABLE_AFTER_MS;
  }

  /** Room among a client's own connections: its first one waiting for a request (long enough) goes. */
  #makeRoomIn(own: Set<Socket>): boolean {
    const now = performance.now();
    for (const s of own) {
      if (this.#evictable(s, now)) return this.#evict(s);
    }
    return false;
  }

  /**
   * Room among all: the one waiting longest (if long enough); else the
   * newest of the client holding the most, if it holds more than `holds` + 1.
   */
  #makeRoom(holds: number): boolean {
    const oldest = this.#waiting.keys().next();
    if (!oldest.done && this.#evictable(oldest.value, performance.now())) return this.#evict(oldest.value);
    // At most `max` clients hold a connection: a pass over them, only when every connection held is busy.
    let most: Set<Socket> | null = null;
    for (const c of this.#byClient.values()) if (!most || c.size > most.size) most = c;
    if (!most || most.size <= holds + 1) return false;
    let newest: Socket | null = null;
    for (const s of most) newest = s;
    return this.#evict(newest!);
  }

  #evict(socket: Socket): true {
    this.evicted++;
    this.#forget(socket);
    socket.destroy();
    return true;
  }

  #request(socket: Socket, res: http.ServerResponse): void {
    const held = this.#held.get(socket);
    if (!held) return;
    held.busy++;
    this.#waiting.delete(socket);
    let done = false;
    const answered = () => {
      if (done) return;
      done = true;
      if (--held.busy === 0 && this.#held.has(socket) && !socket.destroyed) this.#waiting.set(socket, performance.now());
    };
    res.once('finish', answered);
    res.once('close', answered);
  }

  #forget(socket: Socket): void {
    const held = this.#held.get(socket);
    if (!held) return;
    this.#held.delete(socket);
    this.#waiting.delete(socket);
    const own = this.#byClient.get(held.client);
    own?.delete(socket);
    if (own?.size === 0) this.#byClient.delete(held.client);
  }
}

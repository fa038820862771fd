// How many connections browser mode holds, and which goes when there are
// too many.
//
// Every open connection costs a file descriptor and some memory, and the
// process has a fixed number of descriptors (`ulimit -n`): ~20,000 clients
// that connect and send nothing (or a header a byte at a time) held the
// server's once, so that it answered no one for over two minutes. So at
// most `max` connections are held. One more that comes takes the place of
// the connection that has waited longest for a request — one that sent
// nothing yet, half a header, or is idle between two requests (keep-alive)
// — which is closed; such a connection costs its client nothing to open
// again, while holding it is how a flood of them locks everyone out. When
// every connection held is busy with a request (being read, computed or
// sent), the new one is closed at once instead. A page's request goes out
// as soon as its connection is open, so it is never the one waiting
// longest while others connect.
//
// Node's own timeouts (server.ts) close what waits too long regardless:
// no request header within HEADERS_TIMEOUT_MS, no whole request within
// REQUEST_TIMEOUT_MS, nothing on an idle keep-alive connection within
// KEEP_ALIVE_TIMEOUT_MS.
import type http from 'node:http';
import type { Socket } from 'node:net';

/** Connections held at most (`serve` holds this many; a page uses six). */
export const MAX_CONNECTIONS = 1024;

interface Held {
  /** Requests read and not yet answered (pipelined ones count: Node reads them before the first is answered). */
  busy: number;
}

export class ConnectionLimit {
  readonly #max: number;
  readonly #held = new Map<Socket, Held>();
  /** Connections waiting for a request, longest first (Map order: one that starts waiting again goes last). */
  readonly #waiting = new Set<Socket>();
  /** Connections closed to keep the count: new ones when all were busy, and those that had waited longest. */
  refused = 0;
  evicted = 0;

  constructor(server: http.Server, max = MAX_CONNECTIONS) {
    this.#max = max;
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
    if (this.#held.size >= this.#max) {
      const oldest = this.#waiting.values().next();
      if (oldest.done) {
        this.refused++;
        socket.destroy();
        return;
      }
      this.evicted++;
      this.#forget(oldest.value);
      oldest.value.destroy();
    }
    this.#held.set(socket, { busy: 0 });
    this.#waiting.add(socket);
    socket.once('close', () => this.#forget(socket));
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
      if (--held.busy === 0 && this.#held.has(socket) && !socket.destroyed) this.#waiting.add(socket);
    };
    res.once('finish', answered);
    res.once('close', answered);
  }

  #forget(socket: Socket): void {
    this.#held.delete(socket);
    this.#waiting.delete(socket);
  }
}

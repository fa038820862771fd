// How many of the page's analysis requests go on the wire at once (client.ts).
// Chromium opens at most six connections to one host over HTTP/1.1, and an
// analysis may take seconds on a large recording (the query side answers
// them one at a time): with six on the wire, a window or a poll would wait
// for one to finish. So the page keeps most of them here, in two lanes of
// their own: the panels' (the findings, their scope's label, the Stats
// tab), and the rest (the overlays, the iterations row, ranges, SQL…).
// In one lane, the Stats tab clicked as a 10 M-operation recording opened
// waited behind the timeline's iterations row (20 s on the query side),
// and opened again behind the next ones, for an answer the query side had
// kept. Two lanes of two leave two connections for windows and polls.

/** Methods a panel waits for: a lane of their own. */
export const PANEL_METHODS: ReadonlySet<string> = new Set(['findings', 'stats', 'scopeInfo']);
/** Requests on the wire at most, per lane. */
export const PER_LANE = 2;

/** Runs at most `limit` of the functions given at once, in the order given. */
export function limiter(limit: number): <T>(run: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(run: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((go) => waiting.push(go));
    running++;
    try {
      return await run();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

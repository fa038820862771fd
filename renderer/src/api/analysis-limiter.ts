// How many of the page's analysis requests go on the wire at once (client.ts).
// Chromium opens at most six connections to one host over HTTP/1.1, and an
// analysis may take seconds on a large recording (the query side answers
// them one at a time): with six on the wire, a window or a poll would wait
// for one to finish. So the page keeps most of them here, in lanes of
// their own: the findings panel's (its findings, their scope's label), the
// Stats tab's, and the rest (the overlays, the iterations row, ranges,
// SQL…). In one lane, the Stats tab clicked as a 10 M-operation recording
// opened waited behind the timeline's iterations row (20 s on the query
// side); sharing the findings' lane, it waited in the page until the
// findings' label was answered, by when their diagnosis had the query
// side, where the tab would have gone before it (analysis-channel.ts
// PANEL_ORDER). Two, one and one on the wire leave two connections for
// windows and polls.

export type Lane = 'findings' | 'stats' | 'others';

/** The lane of an analysis method. */
export function laneOf(method: string): Lane {
  return method === 'findings' || method === 'scopeInfo' ? 'findings' : method === 'stats' ? 'stats' : 'others';
}

/** Requests on the wire at most, per lane. */
export const LANE_LIMITS: Readonly<Record<Lane, number>> = { findings: 2, stats: 1, others: 1 };

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

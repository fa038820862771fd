// Work a command finishes before its process exits: begun by whoever needs
// it (the column cache's writes: analysis/load/column-cache.ts), awaited by
// the command line before it exits (cli/streamscope.ts), which otherwise
// ends the process as soon as its output is written.

const pending: Promise<unknown>[] = [];

/** `work` is to be finished before the process exits (its failure is its own to report: it is not awaited for one). */
export function finishBeforeExit(work: Promise<unknown>): void {
  pending.push(work.catch(() => {}));
}

/** Every piece of work registered so far (and any registered meanwhile), settled. */
export async function exitWorkFinished(): Promise<void> {
  while (pending.length > 0) await Promise.all(pending.splice(0));
}

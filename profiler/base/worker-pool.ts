// Work spread over worker threads, one task at a time per worker, each worker
// taking the next task not yet taken when it answers: what `summarize`
// (job/summarize.ts) and `import` of many traces (import/import-many.ts) run
// their files on. The worker's module answers each request with one message.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * A worker's entry beside the module at `from` (its import.meta.url): NAME.ts
 * under Node 22, NAME.cjs in the bundled CLI, where app/vite.config.ts builds
 * every worker as an entry of its own into the folder of the bundle's chunks.
 */
export function workerEntry(name: string, from: string): URL {
  const bundled = new URL(`./${name}.cjs`, from);
  return fileURLToPath(from).endsWith('.cjs') && existsSync(bundled) ? bundled : new URL(`./${name}.ts`, from);
}

/**
 * Posts each of `requests` to one of `count` workers started on `entry`,
 * the next as soon as that worker answers, and hands every answer to
 * `answered` (in the order they come). Resolves when every request is
 * answered; rejects when `answered` throws, a worker fails or one ends with
 * requests left (`name`, e.g. 'a summary worker', says which). The workers
 * are terminated either way.
 */
export async function runOnWorkers<Request, Answer>(
  name: string,
  entry: URL,
  requests: readonly Request[],
  count: number,
  answered: (answer: Answer) => void,
): Promise<void> {
  let next = 0;
  const pool = Array.from({ length: Math.min(count, requests.length) }, () => new Worker(entry));
  try {
    await Promise.all(
      pool.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            // A request posted and not yet answered: a worker ending then would leave it unanswered for ever.
            let busy = false;
            const give = () => {
              busy = true;
              worker.postMessage(requests[next++]!);
            };
            worker.on('message', (m: Answer) => {
              busy = false;
              // The worker's next request first: it runs while this thread handles the answer (a summary parsed and
              // stored in its recording, ~0.1 s a rank of 1 M operations, which the worker otherwise waited out).
              const more = next < requests.length;
              if (more) give();
              try {
                answered(m);
              } catch (err) {
                return reject(err);
              }
              // Done once its last answer is handled: a failure there still rejects.
              if (!more) resolve();
            });
            worker.on('error', reject);
            worker.on('exit', (code) => (busy || next < requests.length ? reject(new Error(`${name} ended (exit code ${code})`)) : undefined));
            if (next < requests.length) give();
            else resolve();
          }),
      ),
    );
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
}

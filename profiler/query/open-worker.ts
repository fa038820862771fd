// A worker thread of open-read.ts: reads each recording it is given once —
// through the store's checks, as every reader opens one — for its ranks and
// what the job view shows of it, and answers with both (null for what it
// could not read: the opening thread reads that file again and says why).
import { parentPort } from 'node:worker_threads';
import { inspectOpen } from '../merge/job-cache.ts';
import { openRecording } from '../store/database.ts';
import { readRank } from './job-query.ts';
import type { OpenAnswer, OpenRequest } from './open-read.ts';

parentPort!.on('message', ({ n, file, view }: OpenRequest) => {
  const answer: OpenAnswer = { n, inspected: null, rank: null };
  try {
    const db = openRecording(file, { readonly: true });
    try {
      answer.inspected = inspectOpen(file, db);
      if (view) answer.rank = readRank(db, file);
    } finally {
      db.close();
    }
  } catch {
    // Read again, and refused by name, where it is opened (open-read.ts).
  }
  parentPort!.postMessage(answer);
});

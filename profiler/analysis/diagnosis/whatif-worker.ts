// The what-if thread's worker (whatif-thread.ts): handed the columns an
// analysis loaded, it analyses them as that analysis does (analyze(): the
// same scope, so the same trace and host calls; the start-up, call index and
// outer calls that analysis hands it, it takes: whatif-thread.ts), builds the host model and
// what every replay shares (replay.ts prepareReplays), and
// answers each fix it is asked for and claims first (the diagnosis's thread
// takes those it reaches first) with its replay — as the diagnosis would
// have made it on its own thread (diagnose.ts: the prediction alone, no
// replay of the unchanged recording); the diagnosis's thread sets it
// against the recorded span it measures itself.
import { parentPort, type MessagePort } from 'node:worker_threads';
import { analyze, type Analysis } from './analyze.ts';
import { openRecording } from '../../store/database.ts';
import { mapEntry } from '../load/column-cache.ts';
import { prepareReplays } from '../replay/replay.ts';
import { tryPredict } from '../replay/whatif.ts';
import { FIX_IDS } from '../../contract/findings.ts';
import { Claim, HandedOver, type HandedColumns, type WhatIfAnswer, type WhatIfRequest } from './whatif-thread.ts';
import type { TimelineColumns } from '../../native/columns.ts';

/** The columns handed over: themselves, or the column cache entry the analysing thread mapped, mapped here. */
function columnsOf(handed: HandedColumns, file: string): TimelineColumns {
  if ('ops' in handed) return handed;
  const mapped = mapEntry(handed.cache);
  // Replaced since the analysing thread mapped it (the recording changed): the estimates are then made there.
  if (!mapped) throw new Error(`the column cache entry ${handed.cache.entry} no longer holds ${file} as it was loaded`);
  return mapped;
}

type Start = { port: MessagePort; posted: Int32Array; sent: Int32Array; claims: Int32Array };

parentPort!.once('message', ({ port, posted, sent, claims }: Start) => {
  let analysis: Analysis | null = null;
  let handed: HandedOver | null = null;
  let failed = false;
  const answer = (a: WhatIfAnswer) => {
    port.postMessage(a);
    Atomics.add(posted, 0, 1);
    Atomics.notify(posted, 0);
  };
  const handle = (m: WhatIfRequest) => {
    if (failed) return;
    try {
      if (m.kind === 'columns') {
        // The start-up, call index and outer calls the analysing thread hands over, taken as this analysis reaches
        // them (the fixes named meanwhile kept for after it).
        handed = m.handing > 0 ? new HandedOver(port, sent, m.handing) : null;
        const db = openRecording(m.file, { readonly: true });
        try {
          // What analyze() reads of the file besides the columns it reads now (its small tables, the host's events and
          // waits): a recording since grown has rows beyond the columns, which match none of their calls.
          analysis = analyze(db, {
            columns: columnsOf(m.columns, m.file),
            scope: m.scope,
            file: m.file,
            ...(m.pids ? { pids: m.pids } : {}),
            handed: handed ?? undefined,
          });
          prepareReplays(analysis.trace, analysis.host);
        } finally {
          db.close();
        }
        for (const r of handed?.pending.splice(0) ?? []) handle(r);
      } else if (m.kind === 'estimate') {
        if (Atomics.compareExchange(claims, FIX_IDS.indexOf(m.fix), Claim.Free, Claim.Worker) !== Claim.Here) {
          // Free, now taken; or the worker's already (the first fix named: whatif-thread.ts start).
          const predicted = tryPredict(analysis!.trace, analysis!.host, m.fix, { unchangedReplay: false });
          answer({ kind: 'prediction', fix: m.fix, answer: predicted, ...(handed ? { took: handed.took } : {}) });
        }
      }
      // A start-up, call index or outer calls that came after the analysis stopped waiting for them: it made its own.
    } catch (err) {
      failed = true;
      answer({ kind: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  };
  port.on('message', handle);
});

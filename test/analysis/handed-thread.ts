// A what-if thread handed a recording's columns as analyze() hands them
// (whatif-thread.ts handColumns), its analysing side an analysis of its own
// of the same columns, made when first asked: for the tests of the thread
// (whatif-thread.test.ts) and of the column cache that feeds it
// (column-cache.test.ts).
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { estimatesHere, WhatIfThread } from '../../profiler/analysis/diagnosis/whatif-thread.ts';
import { recordedSpan } from '../../profiler/analysis/replay/whatif.ts';
import type { TimelineColumns } from '../../profiler/native/columns.ts';
import { openRecording } from '../../profiler/store/database.ts';

/**
 * A new thread handed `columns` of `file` (the worker opens `opens`; `handing`: told that the call index and outer
 * calls follow, waiting that long for them), and this side's analysis of the same columns.
 */
export function handedThread(file: string, columns: TimelineColumns, opens = file, handing = 0): { thread: WhatIfThread; analysed: () => Analysis } {
  let own: Analysis | null = null;
  const analysed = (): Analysis => {
    if (own) return own;
    const db = openRecording(file, { readonly: true });
    try {
      return (own = analyze(db, { columns }));
    } finally {
      db.close();
    }
  };
  const thread = new WhatIfThread();
  thread.handColumns(
    { file: opens, columns, scope: undefined, pids: undefined, handing },
    { estimates: () => estimatesHere(analysed().trace, analysed().host), recorded: () => recordedSpan(analysed().trace, analysed().host) },
  );
  return { thread, analysed };
}

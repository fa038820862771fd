// The fixes' what-ifs on a second thread (profiler/analysis/diagnosis/whatif-thread.ts):
// its worker analyses the columns the diagnosis loaded, shared, not copied,
// and its estimates must be the ones this thread makes — whichever thread
// makes each, and when the worker fails. Real recordings with several fixes
// each (a PyTorch training loop on an H100, a two-GPU NCCL job on H200s).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { handedThread } from './handed-thread.ts';
import { timelineRows } from '../../profiler/analysis/load/columns.ts';
import { estimatesHere, WhatIfThread, type EstimateAnswer } from '../../profiler/analysis/diagnosis/whatif-thread.ts';
import type { FixId } from '../../profiler/contract/findings.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { recordedSpan } from '../../profiler/analysis/replay/whatif.ts';
import { loadSharedTimelineColumns } from '../../profiler/native/addon.ts';

const recordings = path.resolve(import.meta.dirname, '../fixtures/recordings');
const FILES = ['torch_train_loop.sqlite', 'nccl-straggler-h200x2.sqlite'].map((f) => path.join(recordings, f));

/** The fixes the recording's diagnosis names (rule order), and each one's estimate made on this thread. */
function answersHere(file: string): { fixes: FixId[]; answers: Map<FixId, EstimateAnswer> } {
  const db = openRecording(file, { readonly: true });
  try {
    const a = analyze(db);
    const fixes = [...new Set(a.diagnosis.findings.flatMap((f) => (f.fixId ? [f.fixId] : [])))];
    const here = estimatesHere(a.trace, a.host);
    return { fixes, answers: new Map(fixes.map((fix) => [fix, here.result(fix)])) };
  } finally {
    db.close();
  }
}

/**
 * A thread prepared on the file's columns, loaded into shared memory as analyze() loads them for it; `handing`: told
 * that the call index and outer calls follow, waiting that long for them (none are sent here).
 */
function preparedThread(file: string, opens = file, handing = 0): WhatIfThread {
  const db = openRecording(file, { readonly: true });
  try {
    const columns = loadSharedTimelineColumns(file, timelineRows(db));
    // This thread's own side, on its own analysis of the same columns: what analyze() hands the thread.
    const { thread } = handedThread(file, columns, opens, handing);
    threads.push(thread);
    return thread;
  } finally {
    db.close();
  }
}

const threads: WhatIfThread[] = [];
afterEach(() => {
  for (const t of threads.splice(0)) t.close();
});

async function until(done: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(FILES)('what-ifs on a second thread: %s', (file) => {
  const { fixes, answers } = answersHere(file);

  it('has several fixes to estimate', () => {
    expect(fixes.length).toBeGreaterThanOrEqual(5);
  });

  it('the worker, given time, estimates every fix, each as this thread does', async () => {
    const thread = preparedThread(file);
    for (const fix of fixes) thread.start(fix);
    await until(() => thread.answersPosted() === fixes.length);
    for (const fix of fixes) expect(thread.result(fix)).toEqual(answers.get(fix));
    expect(thread.estimatedBy()).toEqual({ worker: fixes, here: [] });
    expect(thread.failure).toBeNull();
  });

  it('asked at once, this thread makes those the worker has not begun, but the first named: the same answers', () => {
    const thread = preparedThread(file);
    for (const fix of fixes) thread.start(fix);
    // The worker is still loading its modules: the fixes after the first are this thread's while it waits for the first,
    // which is the worker's (this thread would build a host model of its own to make it).
    for (const fix of fixes) expect(thread.result(fix)).toEqual(answers.get(fix));
    const by = thread.estimatedBy();
    expect(by.worker[0]).toBe(fixes[0]);
    expect(by.here.length).toBeGreaterThan(0);
    expect(by.here).not.toContain(fixes[0]);
    expect([...by.worker, ...by.here].sort()).toEqual([...fixes].sort());
  });

  it('a worker that fails (its recording cannot be opened): every estimate is made here, the failure kept', async () => {
    const thread = preparedThread(file, path.join(recordings, 'no-such-recording.sqlite'));
    for (const fix of fixes) thread.start(fix);
    await until(() => thread.answersPosted() === 1);
    for (const fix of fixes) expect(thread.result(fix)).toEqual(answers.get(fix));
    expect(thread.estimatedBy()).toEqual({ worker: [], here: fixes });
    expect(thread.failure).toMatch(/no-such-recording\.sqlite/);
  });

  it("handed this thread's start-up, call index and outer calls, the worker takes them, and answers as this thread does", async () => {
    const db = openRecording(file, { readonly: true });
    try {
      const columns = loadSharedTimelineColumns(file, timelineRows(db));
      const own = analyze(db, { columns });
      const thread = new WhatIfThread();
      threads.push(thread);
      thread.handColumns(
        { file, columns, scope: undefined, pids: undefined, handing: 60_000 },
        { estimates: () => estimatesHere(own.trace, own.host), recorded: () => recordedSpan(own.trace, own.host) },
      );
      // As analyze() hands them: made over shared memory, after the columns.
      thread.handStartup(own.scope.startup);
      thread.handHost(own.trace.ops, own.host.calls);
      for (const fix of fixes) thread.start(fix);
      await until(() => thread.answersPosted() === fixes.length);
      for (const fix of fixes) expect(thread.result(fix)).toEqual(answers.get(fix));
      expect(thread.handedTaken()).toEqual({ startup: true, callIndex: true, outerCalls: true });
      expect(thread.failure).toBeNull();
    } finally {
      db.close();
    }
  });

  it('told what follows, and none of it comes: the worker waits as long as it was told, then makes its own', async () => {
    const thread = preparedThread(file, file, 50);
    for (const fix of fixes) thread.start(fix);
    await until(() => thread.answersPosted() === fixes.length);
    for (const fix of fixes) expect(thread.result(fix)).toEqual(answers.get(fix));
    expect(thread.handedTaken()).toEqual({ startup: false, callIndex: false, outerCalls: false });
  });

  it('analyze() with the second thread diagnoses as without it', () => {
    const diagnosed = (whatIfThread?: { minRows: number }) => {
      const db = openRecording(file, { readonly: true });
      try {
        return analyze(db, whatIfThread ? { whatIfThread } : {}).diagnosis.findings;
      } finally {
        db.close();
      }
    };
    const without = diagnosed();
    expect(without.some((f) => f.whatIf)).toBe(true);
    expect(diagnosed({ minRows: 0 })).toEqual(without);
  });

  it('the rules begun first (beginDiagnosis, as report does), the what-ifs read after: the same diagnosis, with and without the second thread', () => {
    const begun = (whatIfThread?: { minRows: number }) => {
      const db = openRecording(file, { readonly: true });
      try {
        const a = analyze(db, whatIfThread ? { whatIfThread } : {});
        a.beginDiagnosis();
        a.beginDiagnosis();
        const findings = a.diagnosis.findings;
        a.beginDiagnosis();
        expect(a.diagnosis.findings).toBe(findings);
        return findings;
      } finally {
        db.close();
      }
    };
    const db = openRecording(file, { readonly: true });
    const plain = (() => {
      try {
        return analyze(db).diagnosis.findings;
      } finally {
        db.close();
      }
    })();
    expect(begun()).toEqual(plain);
    expect(begun({ minRows: 0 })).toEqual(plain);
  });
});

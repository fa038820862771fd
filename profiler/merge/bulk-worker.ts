// The second core's half of a large merge (pipeline.ts): the big tables of
// later inputs rewritten ahead, each input's into a scratch recording with
// the ids, times, pids and strings the plan gave it, so that the merging
// thread only moves the finished rows across (SQLite's transfer copy).
// Runs the statements merge.ts wrote for it and nothing else: every
// decision about an input's rows stays in merge.ts.
import fs from 'node:fs';
import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { JobState, type BulkJob, type PipelineShared } from './pipeline-shared.ts';

const { jobs, scratch, template, shared } = workerData as { jobs: BulkJob[]; scratch: string[]; template: string; shared: PipelineShared };
const claims = new Int32Array(shared.claims);
const states = new Int32Array(shared.states);
const slots = new Int32Array(shared.slots);
const control = new Int32Array(shared.control);

/** Waits until `a[i]` is no longer `value`, or the merge stopped: false when it stopped. */
function waitWhile(a: Int32Array, i: number, value: number): boolean {
  while (Atomics.load(a, i) === value) {
    if (Atomics.load(control, 0) !== 0) return false;
    Atomics.wait(a, i, value, 200);
  }
  return Atomics.load(control, 0) === 0;
}

/** A scratch recording, empty: a copy of the template (the merging thread emptied the file to give its pages back). */
const open = (file: string) => {
  fs.copyFileSync(template, file);
  const db = new Database(file);
  db.pragma('foreign_keys = OFF'); // its rows refer to the output's strings, devices, streams, not the scratch's
  db.pragma('journal_mode = OFF'); // scratch: never read if this fails
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -131072');
  db.exec('CREATE TEMP TABLE merge_strings (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)');
  return db;
};

try {
  let used = 0;
  for (const job of jobs) {
    const slot = used % scratch.length;
    // A scratch is free again once the merging thread has copied what it held.
    if (!waitWhile(slots, slot, 1)) break;
    // The merging thread takes the inputs that nobody has started when it reaches them.
    if (Atomics.compareExchange(claims, job.index, 0, 1) !== 0) continue;
    Atomics.store(slots, slot, 1);
    used++;
    let db: Database.Database | null = null;
    try {
      db = open(scratch[slot]!);
      if (job.strings) {
        const insert = db.prepare('INSERT INTO temp.merge_strings (old, new) VALUES (?, ?)');
        for (const [a, b] of job.strings) insert.run(a, b);
      }
      db.prepare('ATTACH DATABASE ? AS src').run(job.file);
      try {
        db.exec('BEGIN');
        for (const t of job.tables) {
          for (const sql of t.numbered) db.exec(sql);
          if ((db.prepare(`SELECT max(id) FROM main.${t.table}`).pluck().get() ?? null) !== t.lastId) {
            db.exec(`DELETE FROM main.${t.table}`);
            db.exec(t.given);
          }
        }
        db.exec('COMMIT');
      } finally {
        if (db.inTransaction) db.exec('ROLLBACK');
        db.exec('DETACH DATABASE src');
      }
      db.close();
      Atomics.store(states, job.index, JobState.Ready + slot);
    } catch {
      db?.close();
      // Done again by the merging thread, which reports whatever is wrong with the input as it always does.
      Atomics.store(slots, slot, 0);
      Atomics.store(states, job.index, JobState.Failed);
      Atomics.notify(states, job.index);
      break;
    }
    Atomics.notify(states, job.index);
  }
} finally {
  Atomics.store(control, 1, 1);
  Atomics.notify(states, 0);
}

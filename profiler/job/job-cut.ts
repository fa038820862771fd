// The job's start-up, found from its ranks' own files as the analysis of
// their merged recording finds it (analysis/job-scope.ts jobStartup: one
// cut for the whole job, where the job's GPUs have done a tenth of their
// work), so that a job's steady state from summaries is cut where the
// merged recording's is, not where each rank's own start-up ends.
//
// The files are read as one recording through a StartupReader (the reads
// jobStartup makes of a recording: zones, the calls that could be start-up
// calls, the operations of the band where a tenth is done) that reads each
// file and places what it reads as merge.ts places it: times moved by the
// file's shift (placeSummaries), row ids, pids and strings as the merge's
// own plan of the files maps them (merge/plan.ts planMerge, over every
// string: a summary's plan maps only the strings it names, not the calls').
// The zones are each file's own, where the merged file has zones of its
// own: jobStartup's answer does not depend on where zones begin (the band
// only narrows where the rows are read), so it is the same.
import { placedStartupReader, startupOfZones } from '../analysis/job-scope.ts';
import type { Startup } from '../contract/scope.ts';
import type { Ns } from '../contract/time.ts';
import { ColumnPool } from '../native/addon.ts';
import { readInputFacts } from '../merge/input-facts.ts';
import { planMerge } from '../merge/plan.ts';
import { openRecording, readMeta } from '../store/database.ts';

/** A rank's file and where its clock lands in the job (of-summaries.ts Placement): its times' shift, its clock's correction. */
export interface PlacedFile {
  file: string;
  shift: Ns;
  correctionNs: Ns;
}

/** Start-up of the job of `files` (in the job's clock and ids), as jobStartup finds it on their merged recording. */
export function jobStartupOfFiles(files: readonly PlacedFile[], pool = new ColumnPool()): Startup | null {
  const dbs = files.map((f) => openRecording(f.file, { readonly: true }));
  try {
    const facts = dbs.map((db) => readInputFacts(db));
    const plans = planMerge(facts);
    const strings = new Map<number, string>();
    facts.forEach((f, i) => {
      for (const [id, value] of f.strings) strings.set(plans[i]!.strings.get(id)!, value);
    });
    const placed = files.map((f, i) => ({ file: f.file, db: dbs[i]!, shift: f.shift, ids: plans[i]!.ids, pids: plans[i]!.pids, strings: plans[i]!.strings }));
    return startupOfZones(placedStartupReader(placed, strings, pool), jobMeta(files, dbs.map(readMeta)), strings).startup;
  } finally {
    for (const db of dbs) db.close();
  }
}

/**
 * What start-up reads of the merged recording's meta (startup.ts beforeCuda), as merge.ts writes it: the earliest
 * started_at, and the first recording's origin_wall_ns moved to the job's origin.
 */
function jobMeta(files: readonly PlacedFile[], metas: Map<string, string>[]): Map<string, string> {
  const meta = new Map<string, string>();
  const started = metas.flatMap((m) => m.get('started_at') ?? []).sort();
  if (started.length) meta.set('started_at', started[0]!);
  const wall = metas[0]!.get('origin_wall_ns');
  // The job's origin is the first recording's, corrected, less its shift.
  if (wall && /^-?\d+$/.test(wall)) meta.set('origin_wall_ns', String(BigInt(wall) + BigInt(files[0]!.correctionNs - files[0]!.shift)));
  return meta;
}

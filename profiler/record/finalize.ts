// The last step of a recording (or of `streamscope ingest`): write the
// meta that says where times start, which versions ran, and whether the
// recording is complete — and if not, why, in words a user can act on.
import path from 'node:path';
import { compact, openRecording, recordedDurationNs, writeMeta } from '../store/database.ts';
import { constants as osConstants } from 'node:os';
import { CollectorErrorCode } from '../store/enums.ts';
import { FlushReason } from './format.ts';
import { devices, type DeviceInventory } from '../native/addon.ts';
import type { Db } from '../store/database.ts';
import { markPerThreadDefaultStreams } from './stream-kinds.ts';
import { storeRanks } from '../store/ranks.ts';
import { clearWriting } from '../store/writer.ts';
import { addNote, applyCaptureRange, type CaptureResult } from './capture-range.ts';
import { captureRangeSpec, type CaptureRange } from '../contract/record-request.ts';
import type { DirectoryProgress } from './stream-ingest.ts';

export interface FinalState {
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  complete: boolean;
  incompleteReason: string | null;
  records: number;
  processes: number;
  collectorErrors: { pid: number; code: number; message: string }[];
  /** Facts about the run that cost the recording nothing (worker processes terminated after a flush, ...). */
  notes: string[];
  /** With a capture range: what it kept, or why it could not be applied (then the recording holds everything). */
  capture?: CaptureOutcome;
}

export interface CaptureOutcome {
  spec: string;
  result: CaptureResult | null;
  error: string | null;
}

/**
 * The capture filter, or the whole recording with a note saying why not:
 * what was recorded is never lost to a failure of the filter (it changes
 * the file in one transaction, rolled back on failure).
 */
function capture(db: Db, range: CaptureRange): CaptureOutcome {
  const spec = captureRangeSpec(range);
  try {
    return { spec, result: applyCaptureRange(db, range), error: null };
  } catch (err) {
    const error = (err as Error).message;
    addNote(db, `--capture-range ${spec} could not be applied (${error}): the recording holds everything recorded`);
    return { spec, result: null, error };
  }
}

function signalName(n: number): string {
  const entry = Object.entries(osConstants.signals).find(([, v]) => v === n);
  return entry ? entry[0] : `signal ${n}`;
}

/**
 * Stores each recorded device's PCIe link (NVML, on this machine: the
 * recorder runs where the target ran). The what-if replay takes pinned-copy
 * bandwidth from it when the recording has no pinned copies to measure.
 */
function recordPcieLinks(db: Db, inventory: DeviceInventory): void {
  const update = db.prepare('UPDATE devices SET pcie_generation = ?, pcie_width = ? WHERE uuid = ?');
  for (const d of inventory.devices) {
    if (d.pcie) update.run(d.pcie.maxGeneration, d.pcie.maxWidth, d.uuid);
  }
}

/** Writes the recording's final meta: origin, versions, completeness and why. */
export function finalizeRecording(
  output: string,
  progress: DirectoryProgress,
  status: { code: number | null; signal: NodeJS.Signals | null; pid?: number } | null,
  elapsedMs: number | null,
  ingestError: Error | null,
  captureRange?: CaptureRange,
  run: {
    /** This machine's GPUs (devices()), when the caller took them already; else taken here. */
    inventory?: DeviceInventory;
    /** Notes the recorder gathered about the run (cupti-refusals.ts). */
    notes?: string[];
    /** The output's name, where `output` is still its temporary file (ingest publishes it when finished): what the reasons and the result say. */
    shownAs?: string;
  } = {},
): FinalState {
  const inventory = run.inventory ?? devices();
  const db = openRecording(output); // builds the indexes the bulk load dropped
  try {
    const reasons: string[] = [];
    if (status?.signal) reasons.push(`the target was killed by ${status.signal}; what its collector had written is kept`);
    // The native ingest names the file it failed on: the recording itself (it could not be written: a full disk) or a stream.
    const writeFailed = ingestError !== null && ingestError.message.includes(`${output}: `);
    const problem = run.shownAs ? ingestError?.message.replaceAll(output, run.shownAs) : ingestError?.message;
    if (ingestError && writeFailed) reasons.push(`writing the recording failed (${problem}); it holds what was stored before`);
    else if (ingestError) reasons.push(`a record stream could not be read: ${problem}`);
    if (progress.files.size === 0 && !writeFailed) {
      const noGpu = inventory.error ?? (inventory.devices.length === 0 ? 'the NVIDIA driver reports no CUDA devices' : null);
      reasons.push(
        noGpu !== null
          ? `no CUDA activity was recorded: no GPU to record on: ${noGpu}`
          : 'no CUDA activity was recorded: the target never initialised CUDA, or the collector could not load',
      );
    }
    // Facts worth knowing that cost the recording nothing.
    const notes: string[] = [...(run.notes ?? [])];
    for (const [file, p] of progress.files) {
      if (p.truncated) {
        reasons.push(`the stream of process ${p.pid} ends inside a record at byte ${p.truncated.atByte} (${path.basename(file)})`);
      } else if (!p.complete && p.lastKind === 'Flush' && p.lastFlush?.reason === FlushReason.Signal) {
        // Died of a signal, after the collector flushed everything CUPTI had
        // delivered (e.g. multiprocessing's Pool.terminate() sends SIGTERM to
        // its workers): nothing recorded is missing.
        const sig = signalName(p.lastFlush.signal);
        if (p.pid === status?.pid && status.signal) continue; // the target itself: said above
        notes.push(`process ${p.pid} was terminated by ${sig} after the collector flushed its records`);
      } else if (!p.complete && !status?.signal) {
        reasons.push(`process ${p.pid} ended without finishing its stream (crashed, killed or os._exit()?)`);
      }
    }
    const collectorErrors = db.prepare('SELECT pid, code, message FROM collector_errors ORDER BY id').all() as FinalState['collectorErrors'];
    for (const e of collectorErrors) {
      // A failed activity kind leaves the rest usable; the others mean nothing useful was recorded.
      if (e.code !== CollectorErrorCode.ActivityEnable) reasons.push(`collector in process ${e.pid}: ${e.message}`);
    }
    // Stream kinds are told from the calls that created and used the streams: before a capture range removes those.
    markPerThreadDefaultStreams(db);
    // Each process's rank, from the launcher variables its collector recorded.
    storeRanks(db);
    recordPcieLinks(db, inventory);
    writeMeta(db, { notes: notes.length ? JSON.stringify(notes) : undefined });
    const captured = captureRange ? capture(db, captureRange) : undefined;
    const dropped = (db.prepare('SELECT coalesce(sum(count), 0) AS n FROM dropped_records').get() as { n: number }).n;
    const first = db.prepare('SELECT * FROM processes ORDER BY origin_offset_ns, pid LIMIT 1').get() as
      { driver_version: number | null; runtime_version: number | null; cupti_version: number | null } | undefined;

    const complete = reasons.length === 0;
    const incompleteReason = complete ? null : reasons.join('; ');
    writeMeta(db, {
      origin_ns: progress.originNs,
      origin_wall_ns: progress.originWallNs,
      exit_code: status?.code,
      exit_signal: status?.signal,
      wall_time_ms: elapsedMs,
      duration_ns: recordedDurationNs(db),
      driver_version: cudaVersionString(first?.driver_version),
      runtime_version: cudaVersionString(first?.runtime_version),
      cupti_version: first?.cupti_version ?? null,
      dropped_records: dropped,
      complete,
    });
    if (complete) db.prepare("DELETE FROM meta WHERE key = 'incomplete_reason'").run();
    else writeMeta(db, { incomplete_reason: incompleteReason });
    compact(db, output);
    // Last: from here on a reader takes the recording as finished (store/writer.ts).
    clearWriting(db);
    return {
      output: run.shownAs ?? output,
      exitCode: status?.code ?? null,
      signal: status?.signal ?? null,
      complete,
      incompleteReason,
      records: progress.records,
      processes: progress.files.size,
      collectorErrors,
      notes,
      ...(captured ? { capture: captured } : {}),
    };
  } finally {
    db.close();
  }
}

/** 13000 → "13.0" (cuDriverGetVersion / cudaRuntimeGetVersion encoding). */
export function cudaVersionString(v: number | null | undefined): string | null {
  if (!v) return null;
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

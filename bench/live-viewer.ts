// A live viewer without a browser, for the collector-overhead benchmark on
// the GPU machine (`--only overhead`: StreamScope with a live viewer
// attached, issue 14): a process of its own that waits for a recording to
// appear and reads it as the page does while it grows, through the same
// query side as browser mode (SessionRegistry with its analysis thread and
// process) — recordingState every 250 ms; on a new revision the windows of
// the last 10 s over every row with the concurrency tracks, the summary and
// the minimap at most every second; the findings at most every 5 s, one at a
// time — until the recording is finished.
//
//   node bench/live-viewer.ts FILE     (prints one JSON line when done: polls, revisions, windows, findings)
//
// startLiveViewer() runs it beside a recorder and stops it after.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionRegistry } from '../profiler/query/session.ts';

const POLL_MS = 250;
const SUMMARY_MS = 1000;
const FINDINGS_MS = 5000;
const VIEW_NS = 10e9;

/** Starts the viewer on `file` (which need not exist yet); stop() ends it. */
export function startLiveViewer(file: string): { stop: () => void } {
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(import.meta.url), file], { stdio: ['ignore', 'ignore', 'inherit'] });
  return { stop: () => void child.kill('SIGTERM') };
}

async function main(file: string): Promise<void> {
  while (!fs.existsSync(file)) await new Promise((r) => setTimeout(r, 20));
  const registry = new SessionRegistry({ analysisThread: true });
  const id = registry.open(file).recordingId;
  const q = registry.get(id);
  const counts = { polls: 0, revisions: 0, windows: 0, summaries: 0, findings: 0 };
  let revision = -1;
  let summaryAt = 0;
  let findingsAt = 0;
  let findings: Promise<unknown> | null = null;
  process.on('SIGTERM', () => {
    registry.closeAll();
    process.exit(0);
  });
  for (;;) {
    const s = q.recordingState();
    counts.polls++;
    if (s.revision !== revision) {
      revision = s.revision;
      counts.revisions++;
      const now = performance.now();
      if (now - summaryAt >= SUMMARY_MS || !s.live) {
        summaryAt = now;
        const summary = q.summary();
        q.overview(1600, null);
        counts.summaries++;
        const rows = [...summary.streams.map((st) => st.rowId), ...summary.processes.flatMap((p) => p.threads.map((t) => t.apiRowId))];
        const devices = [...new Set(summary.streams.map((st) => st.deviceId).filter((d): d is number => d !== null))];
        const startNs = Math.max(s.startNs, s.endNs - VIEW_NS);
        q.window({
          rows,
          startNs,
          endNs: s.endNs,
          resolutionNs: 2 ** Math.floor(Math.log2(Math.max(1, (s.endNs - startNs) / 3200))),
          concurrency: devices.map((deviceId) => ({
            deviceId,
            rows: summary.streams.filter((st) => st.deviceId === deviceId).map((st) => st.rowId),
            buckets: 800,
          })),
        });
        counts.windows++;
      }
      if (!findings && (now - findingsAt >= FINDINGS_MS || !s.live)) {
        findingsAt = now;
        findings = registry.findings(id, { kind: 'steady-state' }).finally(() => {
          counts.findings++;
          findings = null;
        });
      }
    }
    if (!s.live) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  await findings;
  process.stdout.write(JSON.stringify(counts) + '\n');
  registry.closeAll();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main(path.resolve(process.argv[2]!));

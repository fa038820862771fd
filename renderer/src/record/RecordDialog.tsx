// Record a new run (desktop app only: capabilities().canRecord). Either the
// bundled workload runner under one of its stream scenarios, or any command
// line (argv, no shell). record() starts the job; recordStatus() is polled
// until it is done (the recording opens) or failed (the message is shown,
// e.g. no GPU on this machine). "Watch it live" (on by default) opens the
// recording as soon as it exists: the timeline follows it as it grows.
import { useEffect, useRef, useState } from 'react';
import type { RecordingHandle, RecordProgress, RecordRequest } from '../../../profiler/contract/api.ts';
import { getApi, toApiError } from '../api/client.ts';

export const WORKLOADS = ['normalise', 'matmul', 'transpose'];
export const SCENARIOS: [string, string][] = [
  ['serial', 'everything on one stream'],
  ['default-stream', 'kernels on the legacy default stream'],
  ['pageable', 'async copies from pageable memory'],
  ['concurrent', 'pinned memory, one stream per chunk'],
  ['events', 'cross-stream dependencies with events'],
  ['priority', 'low and high priority streams'],
  ['sync-each', 'device synchronize inside the loop'],
  ['multi-gpu', 'chunks spread over all GPUs'],
];

/** Splits a command line into argv: whitespace separates, quotes group, no shell expansion. */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:\\.|[^"\\])*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  return out;
}

export function RecordDialog(props: { onClose: () => void; onDone: (r: RecordingHandle) => void }) {
  const [mode, setMode] = useState<'workload' | 'command'>('workload');
  const [workload, setWorkload] = useState('normalise');
  const [scenario, setScenario] = useState('concurrent');
  const [command, setCommand] = useState('');
  const [captureRange, setCaptureRange] = useState('');
  const [live, setLive] = useState(true);
  const [progress, setProgress] = useState<RecordProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  const busy = progress !== null && !['done', 'failed'].includes(progress.state);
  const poll = (jobId: string) => {
    timer.current = setTimeout(() => {
      getApi()
        .recordStatus(jobId)
        .then((p) => {
          setProgress(p);
          // Live: the recording comes while it runs; the page follows it from here.
          if ((p.state === 'done' || live) && p.recording) props.onDone(p.recording);
          else if (p.state === 'failed') setError(p.message);
          else poll(jobId);
        })
        .catch((e) => setError(toApiError(e).message));
    }, 400);
  };
  const start = () => {
    setError(null);
    const target: RecordRequest = mode === 'workload' ? { workload: { name: workload, scenario } } : { command: splitCommand(command) };
    // Checked by the API: a malformed range comes back as the error shown below.
    const req: RecordRequest = { ...(captureRange.trim() ? { ...target, captureRange: captureRange.trim() } : target), live };
    if (mode === 'command' && req.command!.length === 0) {
      setError('Enter a command line, e.g. python3 train.py --epochs 1');
      return;
    }
    getApi()
      .record(req)
      .then((p) => {
        setProgress(p);
        if (p.state === 'failed') setError(p.message);
        else if (p.state === 'done' && p.recording) props.onDone(p.recording);
        else poll(p.jobId);
      })
      .catch((e) => setError(toApiError(e).message));
  };

  return (
    <div
      className="modal-backdrop"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget && !busy) props.onClose();
      }}
    >
      <div className="modal" role="dialog" aria-labelledby="record-title" data-testid="record-dialog">
        <h2 id="record-title">Record a run</h2>
        <div className="seg">
          <label>
            <input type="radio" checked={mode === 'workload'} onChange={() => setMode('workload')} disabled={busy} /> Bundled workload
          </label>
          <label>
            <input type="radio" checked={mode === 'command'} onChange={() => setMode('command')} disabled={busy} /> Command line
          </label>
        </div>
        {mode === 'workload' ? (
          <div className="form">
            <label>
              Workload
              <select data-testid="record-workload" value={workload} onChange={(e) => setWorkload(e.target.value)} disabled={busy}>
                {WORKLOADS.map((w) => (
                  <option key={w}>{w}</option>
                ))}
              </select>
            </label>
            <label>
              Scenario
              <select data-testid="record-scenario" value={scenario} onChange={(e) => setScenario(e.target.value)} disabled={busy}>
                {SCENARIOS.map(([s, what]) => (
                  <option key={s} value={s}>
                    {s} — {what}
                  </option>
                ))}
              </select>
            </label>
          </div>
        ) : (
          <div className="form">
            <label>
              Command (run without a shell)
              <input
                data-testid="record-command"
                value={command}
                placeholder="python3 train.py --epochs 1"
                onChange={(e) => setCommand(e.target.value)}
                disabled={busy}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' && !busy) start();
                }}
              />
            </label>
          </div>
        )}
        <div className="form">
          <label>
            Capture range (optional: keep only nvtx:NAME's instances, or cuda-profiler-api's start to stop)
            <input
              data-testid="record-capture-range"
              value={captureRange}
              placeholder="nvtx:step"
              onChange={(e) => setCaptureRange(e.target.value)}
              disabled={busy}
            />
          </label>
        </div>
        <div className="form">
          <label>
            <input type="checkbox" data-testid="record-live" checked={live} onChange={(e) => setLive(e.target.checked)} disabled={busy} /> Watch it live: open
            the timeline now and follow the recording as it grows
          </label>
        </div>
        {progress && (
          <div className="progress" data-testid="record-progress">
            <span className={`state state-${progress.state}`}>{progress.state}</span>
            <span>{progress.records.toLocaleString('en-US')} records</span>
            <span className="msg">{progress.message}</span>
            {busy && <span className="spinner" />}
          </div>
        )}
        {error && (
          <div className="dialog-error" role="alert" data-testid="record-error">
            {error}
          </div>
        )}
        <div className="buttons">
          <button onClick={props.onClose} disabled={busy}>
            Close
          </button>
          <button className="primary" data-testid="record-start" onClick={start} disabled={busy}>
            {busy ? 'Recording…' : 'Record'}
          </button>
        </div>
      </div>
    </div>
  );
}

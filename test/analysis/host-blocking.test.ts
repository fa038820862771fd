// The host-blocking rule (profiler/analysis/diagnosis/findings/host-blocking.ts) knows
// calls by their family (analysis/call-families.ts), not by exact name: a
// program built with --default-stream per-thread calls
// cudaStreamSynchronize_ptsz, cudaLaunchKernel_ptsz, cudaMemcpy_ptds, and
// those block the host exactly as the plain calls do. A real recording
// (CuPy, three cudaStreamSynchronize and eleven cudaMalloc/cudaFree between
// launches) with every such call renamed to its per-thread form must get
// the same findings, only with the names it was given.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../profiler/analysis/diagnosis/diagnose.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import type { Finding } from '../../profiler/contract/findings.ts';
import { openRecording } from '../../profiler/store/database.ts';

const fixture = path.resolve(import.meta.dirname, '../fixtures/recordings/cupy_streams.sqlite');

/** The runtime calls that have per-thread-default-stream forms, and the suffix CUDA gives each. */
const PER_THREAD: Record<string, string> = {
  cudaStreamSynchronize: '_ptsz',
  cudaLaunchKernel: '_ptsz',
  cudaMemcpyAsync: '_ptsz',
  cudaMemsetAsync: '_ptsz',
  cudaEventRecord: '_ptsz',
  cudaStreamWaitEvent: '_ptsz',
  cudaStreamQuery: '_ptsz',
  cudaMemcpy: '_ptds',
  cudaMemset: '_ptds',
};

describe('host-blocking calls in per-thread-default-stream programs', () => {
  it('cudaStreamSynchronize_ptsz blocks like cudaStreamSynchronize: same findings, costs, evidence and what-if', () => {
    const db = openRecording(fixture, { readonly: true });
    const { trace, host } = analyze(db);
    db.close();
    const renamed = new Map([...host.names].map(([id, name]) => [id, PER_THREAD[name] ? name + PER_THREAD[name] : name]));
    expect([...renamed.values()]).toContain('cudaStreamSynchronize_ptsz');

    const plain = diagnose(trace, host).findings;
    const perThread = diagnose(trace, { ...host, names: renamed }).findings;
    const sync = (fs: Finding[]) => fs.find((f) => f.kind === 'host-blocking-call' && f.callFamily === 'sync');
    expect(sync(plain)!.title).toMatch(/^cudaStreamSynchronize blocked thread \d+ 3 times between launches/);
    expect(sync(perThread)!.title).toMatch(/^cudaStreamSynchronize_ptsz blocked thread \d+ 3 times between launches/);

    const withPlainNames = (f: Finding) => ({
      ...f,
      title: f.title.replace(/_pt(sz|ds)\b/g, ''),
      explanation: f.explanation.replace(/_pt(sz|ds)\b/g, ''),
    });
    expect(perThread.map(withPlainNames)).toEqual(plain);
    expect(
      perThread
        .filter((f) => f.kind === 'host-blocking-call')
        .map((f) => f.fixId)
        .sort(),
    ).toEqual(['hoist-alloc', 'remove-host-blocking']);
  });
});

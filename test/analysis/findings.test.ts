// The diagnosis on the real H100 recordings of every runner scenario: the
// expected causes are found, with evidence that exists in the file, and
// nothing claims serialization where the streams overlapped (concurrent,
// priority, multi-gpu) or where events order them on purpose.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../profiler/analysis/diagnosis/diagnose.ts';
import type { Finding, FindingKind } from '../../profiler/contract/findings.ts';
import { loadHost } from '../../profiler/analysis/host.ts';
import { loadTrace } from '../../profiler/analysis/trace.ts';
import { openRecording } from '../../profiler/store/database.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/recordings');

/** Kinds that say "this serialized your streams". */
const SERIALIZATION: FindingKind[] = ['legacy-default-stream', 'pageable-async-copy', 'sync-copy', 'sync-memset', 'host-blocking-call', 'single-stream'];

interface Expectation {
  /** Must be present, at warning or above. */
  causes: FindingKind[];
  /** Must be present at info (limits, intended behaviour). */
  notes?: FindingKind[];
}

const EXPECTED: Record<string, Expectation> = {
  serial: { causes: ['single-stream'] },
  'default-stream': { causes: ['legacy-default-stream'] },
  pageable: { causes: ['pageable-async-copy'] },
  concurrent: { causes: [] },
  events: { causes: [], notes: ['event-ordering'] },
  priority: { causes: [] },
  'sync-each': { causes: ['host-blocking-call'] },
  'multi-gpu': { causes: [] },
};

function findingsOf(file: string): { findings: Finding[]; check: (f: Finding) => void } {
  const db = openRecording(path.join(dir, file), { readonly: true });
  const trace = loadTrace(db);
  const { findings } = diagnose(trace, loadHost(db, trace.ops));
  // Evidence must name rows that exist: the app highlights them by id.
  const exists = (table: string, ids: number[]) => {
    for (const id of ids.slice(0, 50)) expect(db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).get(id), `${file}: ${table} ${id}`).toBeTruthy();
  };
  for (const f of findings) {
    exists('kernels', f.evidence.kernels);
    exists('memcpys', f.evidence.memcpys);
    exists('memsets', f.evidence.memsets);
    exists('api_calls', f.evidence.apiCalls);
  }
  db.close();
  return {
    findings,
    check: (f) => {
      // A title is one line that counts what happened, and a finding that
      // costs time says how much in its title (the findings panel and the
      // report show titles alone until one is opened).
      expect(f.title).not.toMatch(/\n|\.$/);
      expect(f.title).toMatch(/\d/);
      if (f.costNs > 0) expect(f.title, f.title).toMatch(/\d(\.\d+)? (ns|µs|ms|s|MiB|GiB|KiB)\b/);
      // The explanation says why, in sentences: more than the title repeats.
      expect(f.explanation).toMatch(/[.!?)]$/);
      expect(f.explanation.length).toBeGreaterThan(f.title.length);
      expect(f.costNs).toBeGreaterThanOrEqual(0);
      expect(f.evidence.window.end).toBeGreaterThanOrEqual(f.evidence.window.start);
    },
  };
}

describe('diagnosis of the H100 runner recordings', () => {
  for (const workload of ['normalise', 'matmul', 'transpose']) {
    for (const [scenario, want] of Object.entries(EXPECTED)) {
      it(`${workload} ${scenario}: ${want.causes.join(', ') || 'no serialization'}`, () => {
        const { findings, check } = findingsOf(`${workload}-${scenario}.sqlite`);
        findings.forEach(check);
        for (const kind of want.causes) {
          const f = findings.find((x) => x.kind === kind);
          expect(f, `${kind} in ${findings.map((x) => x.kind)}`).toBeDefined();
          expect(f!.severity).not.toBe('info');
          expect(f!.fix.length).toBeGreaterThan(20);
          expect(f!.evidence.kernels.length + f!.evidence.memcpys.length + f!.evidence.apiCalls.length).toBeGreaterThan(0);
        }
        for (const kind of want.notes ?? []) expect(findings.find((x) => x.kind === kind)?.severity).toBe('info');
        const claimed = findings.filter((x) => SERIALIZATION.includes(x.kind) && !want.causes.includes(x.kind));
        expect(claimed.map((x) => x.title)).toEqual([]);
      });
    }
  }

  it('sync-each: one cudaDeviceSynchronize between each pair of chunks, the last one not flagged', () => {
    const { findings } = findingsOf('normalise-sync-each.sqlite');
    const f = findings.find((x) => x.kind === 'host-blocking-call')!;
    expect(f.title).toMatch(/^cudaDeviceSynchronize .* 7 times between launches/);
    expect(f.evidence.apiCalls).toHaveLength(7);
  });

  it('default-stream: the evidence is the 8 kernels launched on the legacy default stream', () => {
    const { findings } = findingsOf('normalise-default-stream.sqlite');
    const f = findings.find((x) => x.kind === 'legacy-default-stream')!;
    expect(f.evidence.kernels).toHaveLength(8);
    expect(f.evidence.memcpys).toHaveLength(0);
  });

  it('transpose: kernels that fill all SMs are reported as a limit, not a cause', () => {
    const { findings } = findingsOf('transpose-concurrent.sqlite');
    expect(findings.find((x) => x.kind === 'device-full')?.severity).toBe('info');
  });
});

describe('what the legacy default stream cost, against the concurrent run', () => {
  // The cost is the replay's saving: the default-stream run minus it should
  // land on the measured concurrent run of the same work (within 5%).
  for (const workload of ['normalise', 'matmul', 'transpose']) {
    it(`${workload}: default-stream span − cost within 5% of the concurrent span`, () => {
      const span = (file: string) => {
        const db = openRecording(path.join(dir, file), { readonly: true });
        const t = loadTrace(db);
        db.close();
        let s = Infinity;
        let e = -Infinity;
        for (let i = 0; i < t.ops.length; i++) {
          s = Math.min(s, t.ops.start[i]!);
          e = Math.max(e, t.ops.end[i]!);
        }
        return e - s;
      };
      const concurrent = span(`${workload}-concurrent.sqlite`);
      const { findings } = findingsOf(`${workload}-default-stream.sqlite`);
      const cost = findings.find((f) => f.kind === 'legacy-default-stream')!.costNs;
      expect(Math.abs(span(`${workload}-default-stream.sqlite`) - cost - concurrent) / concurrent).toBeLessThan(0.05);
    });
  }
});

describe('a Numba program as users first write it (numba_user_streams.py on the H100)', () => {
  it('names pageable copies with their what-if, the syncs and allocations between chunks, and the JIT compile before the first launch', () => {
    const { findings } = findingsOf('numba_user_streams.sqlite');
    const pageable = findings.find((f) => f.kind === 'pageable-async-copy')!;
    expect(pageable.severity).not.toBe('info');
    expect(pageable.whatIf!.predictedNs).toBeLessThan(pageable.whatIf!.measuredNs);
    expect(findings.some((f) => f.kind === 'host-blocking-call' && f.title.startsWith('cuStreamSynchronize'))).toBe(true);
    const alloc = findings.find((f) => f.kind === 'host-blocking-call' && f.title.startsWith('cuMemAlloc'))!;
    // Allocation and free: one finding, one fix for both.
    expect(alloc.callFamily).toBe('alloc');
    expect(alloc.title).toMatch(/^cuMemAlloc_v2 and cuMemFree_v2 blocked/);
    expect(alloc.fix).toMatch(/cudaMallocAsync/);
    expect(findings.find((f) => f.kind === 'gpu-idle-gap')!.explanation).toMatch(/compiling\/loading kernels \(cuLibraryLoadData/);
  });
});

describe('a Numba program that pins its buffers inside its loop (numba_pinned_loop.py --pin inside on the H100)', () => {
  it('names the registration calls as one cause, with the fix for registration, not for allocation', () => {
    const { findings, check } = findingsOf('numba_pinned_loop.sqlite');
    findings.forEach(check);
    const blocking = findings.filter((f) => f.kind === 'host-blocking-call' && f.callFamily === 'register');
    expect(blocking).toHaveLength(1);
    const f = blocking[0]!;
    expect(f.title).toMatch(/^cuMemHostRegister_v2 and cuMemHostUnregister blocked thread \d+ 188 times between launches/);
    expect(f.severity).not.toBe('info');
    expect(f.explanation).toMatch(/pins the pages/);
    expect(f.explanation).toMatch(/synchronizes the device/);
    expect(f.explanation).toMatch(/cuda\.pinned/);
    for (const name of ['cuda.pinned', 'numba.cuda.pinned_array', 'torch.Tensor.pin_memory()', 'cupyx.empty_pinned', 'cudaHostAlloc'])
      expect(f.fix).toContain(name);
    expect(f.fix).not.toMatch(/cudaMallocAsync/);
    // Whole recording here (start-up included): the replay saves more than the 69 ms of GPU idle the calls caused.
    expect(f.whatIf!.savedNs).toBeGreaterThan(69e6);
    expect(f.costNs).toBe(f.whatIf!.savedNs);
  });

  it('the same program pinning once: no registration in the loop', () => {
    const { findings } = findingsOf('numba_pinned_loop-once.sqlite');
    expect(findings.filter((f) => f.kind === 'host-blocking-call' && f.callFamily !== 'sync')).toEqual([]);
  });
});

// The committed H100 recordings (test/fixtures/recordings, provenance in
// PROVENANCE.md) checked against what each scenario of the bundled runner
// is known to do — the same expectations the GPU tests apply to fresh
// recordings, here without a GPU, in CI.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { overlapByDevice } from '../../profiler/analysis/overlap.ts';
import { summarizeCopies, summarizeKernels } from '../../profiler/analysis/summary.ts';
import { OpKind } from '../../profiler/analysis/trace.ts';
import { markPerThreadDefaultStreams } from '../../profiler/record/stream-kinds.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { StreamFlags } from '../../profiler/store/enums.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { count, expectScenario, isKernel, loadRecording, queryCount, SCENARIOS } from '../helpers/scenarios.ts';

const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
const CHUNKS = 8; // as recorded (see PROVENANCE.md)
const H2D_PER_CHUNK: Record<string, number> = { normalise: 1, matmul: 2, transpose: 1 };

describe('H100 recordings of the bundled runner', () => {
  for (const workload of ['normalise', 'matmul', 'transpose']) {
    for (const scenario of SCENARIOS) {
      it(`${workload} ${scenario}`, () => {
        const l = loadRecording(path.join(fixtures, `${workload}-${scenario}.sqlite`));
        expect(l.trace.meta.get('complete')).toBe('1');
        expectScenario(workload, scenario, l, {
          kernels: CHUNKS,
          h2d: CHUNKS * H2D_PER_CHUNK[workload]!,
          d2h: CHUNKS,
          chunks: CHUNKS,
          devices: 1,
        });
      });
    }
  }

  for (const workload of ['normalise', 'matmul', 'transpose']) {
    it(`${workload} multi-gpu on two H200s: chunks on both devices, each with its own streams`, () => {
      const l = loadRecording(path.join(fixtures, `${workload}-multi-gpu-h200x2.sqlite`));
      expect(l.trace.devices.filter((d) => d.uuid?.startsWith('GPU-')).map((d) => d.name)).toEqual(['NVIDIA H200', 'NVIDIA H200']);
      expectScenario(workload, 'multi-gpu', l, { kernels: CHUNKS, h2d: CHUNKS * H2D_PER_CHUNK[workload]!, d2h: CHUNKS, chunks: CHUNKS, devices: 2 });
      const perDevice = overlapByDevice(l.trace).filter((o) => o.all.count > 0);
      expect(perDevice.map((o) => o.compute.count)).toEqual([CHUNKS / 2, CHUNKS / 2]);
    });
  }

  it('concurrent normalise overlaps far more than the serial run of the same work, and finishes sooner', () => {
    const busy = (s: string) => overlapByDevice(loadRecording(path.join(fixtures, `normalise-${s}.sqlite`)).trace)[0]!.all;
    const serial = busy('serial');
    const concurrent = busy('concurrent');
    expect(serial.overlapFactor!).toBeLessThan(1.02);
    expect(concurrent.overlapFactor!).toBeGreaterThan(1.5);
    expect(concurrent.union).toBeLessThan(serial.union * 0.75);
  });

  it('pinned copies run near PCIe Gen5 speed, pageable ones far below it', () => {
    const gbps = (s: string) =>
      summarizeCopies(loadRecording(path.join(fixtures, `normalise-${s}.sqlite`)).trace)
        .filter((c) => c.direction === 'HtoD')
        .map((c) => c.gigabytesPerSecond!)[0]!;
    expect(gbps('concurrent')).toBeGreaterThan(40);
    expect(gbps('pageable')).toBeLessThan(gbps('concurrent') / 2);
  });
});

describe('per-thread default streams', () => {
  it('are told apart from application and runtime streams (probe built with --default-stream per-thread)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-ptds-'));
    const file = path.join(dir, 'ptds.sqlite');
    fs.copyFileSync(path.join(fixtures, 'per-thread-default-stream.sqlite'), file);
    const db = openRecording(file);
    try {
      // The fixture was finalized with the rule; undo it and apply it again.
      db.prepare(`UPDATE streams SET flags = flags & ~${StreamFlags.PerThreadDefault}`).run();
      expect(markPerThreadDefaultStreams(db)).toBe(2);
      const flags = new Map((db.prepare('SELECT cupti_stream_id AS s, flags FROM streams').all() as { s: number; flags: number }[]).map((r) => [r.s, r.flags]));
      // 13 and 14: each thread's per-thread stream, created by its first launch.
      expect(flags.get(13)! & StreamFlags.PerThreadDefault).toBeTruthy();
      expect(flags.get(14)! & StreamFlags.PerThreadDefault).toBeTruthy();
      // 15: created with cudaStreamCreate; 7: the legacy stream; 6, 12: the runtime's own.
      for (const s of [15, 7, 6, 12]) expect(flags.get(s)! & StreamFlags.PerThreadDefault).toBe(0);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('H100 recordings of Python scripts', () => {
  it("PyTorch: the same kernel and copy counts as torch.profiler's own trace of the same program", () => {
    const { trace } = loadRecording(path.join(fixtures, 'torch_streams.sqlite'));
    const kineto = JSON.parse(fs.readFileSync(path.join(repoRoot, 'test/fixtures/kineto/torch_streams_h100.json'), 'utf8')) as {
      traceEvents: { ph?: string; cat?: string }[];
    };
    const ofCat = (cat: string) => kineto.traceEvents.filter((e) => e.ph === 'X' && e.cat === cat).length;
    expect(ofCat('kernel')).toBeGreaterThan(0);
    expect(count(trace, isKernel(trace))).toBe(ofCat('kernel'));
    expect(count(trace, (i) => trace.ops.kind[i] === OpKind.Memcpy)).toBe(ofCat('gpu_memcpy'));
    expect(summarizeKernels(trace).some((k) => k.name.includes('gemm'))).toBe(true);
  });

  it('a process tree (multiprocessing): three processes, one GPU, workers terminated after their flush', () => {
    const { trace, file } = loadRecording(path.join(fixtures, 'multiprocess_cupy.sqlite'));
    expect(trace.meta.get('complete')).toBe('1');
    expect(JSON.parse(trace.meta.get('notes')!)).toHaveLength(2);
    expect(queryCount(file, 'SELECT count(DISTINCT c.pid) AS n FROM kernels k JOIN contexts c ON c.id = k.context_id')).toBe(3);
    expect(trace.devices.filter((d) => d.uuid?.startsWith('GPU-'))).toHaveLength(1);
  });

  it('a crashed target: kept, incomplete, with the reason', () => {
    const { trace } = loadRecording(path.join(fixtures, 'crashed.sqlite'));
    expect(trace.meta.get('complete')).toBe('0');
    expect(trace.meta.get('incomplete_reason')).toContain('killed by SIGABRT');
    expect(count(trace, isKernel(trace))).toBeGreaterThanOrEqual(200);
  });
});

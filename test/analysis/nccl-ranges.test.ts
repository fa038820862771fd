// NCCL kernels attributed to NCCL's own NVTX ranges (profiler/analysis/
// communication.ts, issue 13 part 3): the collective from the call that
// launched the kernel (ncclAlltoAll and ncclGather run in SendRecv kernels,
// a group's sends and receives in one), the bytes from the call's payload
// (nvtx_ranges.payload, schema 10), the algorithm bandwidth from both.
//
// - On a recording CONSTRUCTED FOR THE ARITHMETIC with the importers'
//   RecordingWriter: NCCL ranges placed as NCCL 2.28 places them (a call's
//   launch inside its range; a group's inside ncclGroupEnd), payloads with
//   NCCL's own entry names, hand-computed expectations. Not a GPU recording:
//   whether CUPTI delivers the payloads is checked on the GPU machine.
// - On the real NCCL recordings (test/fixtures/recordings/nccl-1gpu-*.sqlite,
//   NCCL 2.28.9 recorded before the collector kept payloads): every NCCL
//   kernel named from its ncclAllReduce range, no bytes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readNcclRanges } from '../../profiler/analysis/load/communication.ts';
import { NCCL_DOMAIN, NCCL_MESSAGE_SIZE } from '../../profiler/cuda/nccl.ts';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { RecordingWriter } from '../../profiler/import/recording-writer.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const dir = tempDir('nccl-ranges');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function analysed(file: string, scope: Scope = { kind: 'whole' }): Analysis {
  const db = openRecording(file, { readonly: true });
  try {
    return analyze(db, { scope });
  } finally {
    db.close();
  }
}

/** NCCL 2.19+'s kernels as CUPTI names them (mangled). */
const mangled = (sym: string) => `_Z${sym.length}${sym}24ncclDevKernelArgsStorageILm4096EE`;
const ALL_REDUCE = mangled('ncclDevKernel_AllReduce_Sum_f32_RING_LL');
const ALL_GATHER = mangled('ncclDevKernel_AllGather_RING_LL');
const BROADCAST = mangled('ncclDevKernel_Broadcast_RING_LL');
const SEND_RECV = mangled('ncclDevKernel_SendRecv');

const COMM = '18364758544493064720'; // a communicator hash above 2^53, as the ingest stores it: text
const PID = 100;
const TID = 100;

/**
 * One process, one GPU; times in ns from 0. Each step is an NCCL call as
 * NCCL 2.28 makes it: its NVTX range (domain NCCL) with its payload, the
 * launch (cuLaunchKernelEx) inside it on the same thread, the kernel after.
 */
function constructed(file: string): string {
  const w = new RecordingWriter(file, { overwrite: true, originNs: 0 });
  w.device(0, { name: 'constructed GPU 0' });
  let correlation = 1;
  const range = (name: string, start: number, end: number, payload?: Record<string, number | string>, tid = TID) =>
    w.range({ start, end, pid: PID, tid, name, domain: NCCL_DOMAIN, payload });
  const launch = (at: number, kernel: string, start: number, end: number) => {
    w.apiCall({ start: at, end: at + 1000, pid: PID, tid: TID, name: 'cuLaunchKernelEx', domain: 2, cbid: 652, correlation, returnValue: 0 });
    w.kernel({ start, end, device: 0, context: 1, stream: 8, pid: PID, correlation: correlation++, name: kernel });
  };
  const size = (bytes: number, more: Record<string, number | string> = {}) => ({ 'NCCL communicator ID': COMM, [NCCL_MESSAGE_SIZE]: bytes, ...more });
  // A framework's own range around it all (no domain): not NCCL's.
  w.range({ start: 0, end: 20_000_000, pid: PID, tid: TID, name: 'step' });
  // 1. ncclAllReduce of 16 MiB: its kernel runs 1 ms.
  range('ncclAllReduce', 1_000, 10_000, size(16777216, { 'Reduction operation': 'Sum' }));
  launch(5_000, ALL_REDUCE, 20_000, 1_020_000);
  // 2. ncclAlltoAll of 1 MiB in NCCL's SendRecv kernel, 0.5 ms.
  range('ncclAlltoAll', 2_000_000, 2_010_000, size(1 << 20));
  launch(2_005_000, SEND_RECV, 2_020_000, 2_520_000);
  // 3. ncclGather of 4 KiB, also a SendRecv kernel.
  range('ncclGather', 3_000_000, 3_010_000, size(4096, { Root: 0 }));
  launch(3_005_000, SEND_RECV, 3_020_000, 3_030_000);
  // 4. A group of a send and a receive: the calls enqueue, ncclGroupEnd launches one kernel for both.
  range('ncclGroupStart', 4_000_000, 4_001_000);
  range('ncclSend', 4_002_000, 4_003_000, size(4096, { 'Peer rank': 1 }));
  range('ncclRecv', 4_004_000, 4_005_000, size(4096, { 'Peer rank': 1 }));
  range('ncclGroupEnd', 4_006_000, 4_020_000);
  launch(4_010_000, SEND_RECV, 4_030_000, 4_040_000);
  // 5. A group of two kinds: its kernels keep their names' collectives, and no bytes (which went where is unknown).
  range('ncclGroupStart', 5_000_000, 5_001_000);
  range('ncclAllReduce', 5_002_000, 5_003_000, size(1000));
  range('ncclAllGather', 5_004_000, 5_005_000, size(2000));
  range('ncclGroupEnd', 5_006_000, 5_030_000);
  launch(5_010_000, ALL_REDUCE, 5_040_000, 5_050_000);
  launch(5_020_000, ALL_GATHER, 5_060_000, 5_070_000);
  // 6. ncclBroadcast whose range carried no payload (NCCL before 2.19): the collective, no bytes.
  range('ncclBroadcast', 6_000_000, 6_010_000);
  launch(6_005_000, BROADCAST, 6_020_000, 6_030_000);
  // 7. One ncclAllReduce launching two kernels: its bytes count once, over both kernels' time.
  range('ncclAllReduce', 7_000_000, 7_020_000, size(2_000_000));
  launch(7_005_000, ALL_REDUCE, 7_030_000, 7_130_000);
  launch(7_010_000, ALL_REDUCE, 7_140_000, 7_240_000);
  // 8. A launch outside every NCCL range: the kernel's name.
  launch(8_000_000, ALL_REDUCE, 8_010_000, 8_020_000);
  // 9. An ncclAlltoAll range of another thread around a launch of this one: not its call.
  range('ncclAlltoAll', 9_000_000, 9_100_000, size(1 << 20), TID + 1);
  launch(9_050_000, SEND_RECV, 9_060_000, 9_070_000);
  // 10. A launch inside a call that runs no collective (communicator set-up): none.
  range('ncclCommInitRankConfig', 10_000_000, 10_100_000, { 'NCCL communicator ID': COMM, 'No. of ranks': 2, Rank: 0, 'CUDA device': 0 });
  launch(10_050_000, ALL_REDUCE, 10_060_000, 10_070_000);
  w.finish({ command: 'constructed for the arithmetic: not a GPU recording' });
  return file;
}

describe("NCCL kernels and NCCL's NVTX ranges, on a recording constructed for the arithmetic (not a GPU recording)", () => {
  const file = constructed(path.join(dir, 'constructed.sqlite'));
  const c = analysed(file).communication;

  it("reads NCCL's ranges with their payloads' message sizes", () => {
    const db = openRecording(file, { readonly: true });
    try {
      const ranges = readNcclRanges(db);
      expect(ranges.length).toBe(15); // every range but 'step'
      expect(ranges.filter((r) => r.name === 'ncclAllReduce').map((r) => r.bytes)).toEqual([16777216, 1000, 2_000_000]);
      expect(ranges.find((r) => r.name === 'ncclBroadcast')!.bytes).toBeNull();
      expect(ranges.find((r) => r.name === 'ncclGroupEnd')!.bytes).toBeNull();
    } finally {
      db.close();
    }
  });

  it("takes each kernel's collective from the call that launched it, and the bytes from its payload, once per call", () => {
    const of = (collective: string) => c.collectives.find((k) => k.collective === collective);
    // all-reduce: kernels 1 (1 ms), 5 (10 µs), 7 (2 × 100 µs), 8 (10 µs), 10 (10 µs); bytes of calls 1 and 7, over their kernels' 1.2 ms.
    expect(of('all-reduce')).toEqual({
      collective: 'all-reduce',
      count: 6,
      totalNs: 1_230_000,
      bytes: 16777216 + 2_000_000,
      algorithmBandwidth: (16777216 + 2_000_000) / 1.2e-3,
    });
    expect(of('all-to-all')).toEqual({ collective: 'all-to-all', count: 1, totalNs: 500_000, bytes: 1 << 20, algorithmBandwidth: (1 << 20) / 5e-4 });
    expect(of('gather')).toEqual({ collective: 'gather', count: 1, totalNs: 10_000, bytes: 4096, algorithmBandwidth: 4096 / 1e-5 });
    // The group's send and receive (8 KiB in 10 µs), and step 9's kernel, a SendRecv launched outside its thread's ranges.
    expect(of('send-recv')).toEqual({ collective: 'send-recv', count: 2, totalNs: 20_000, bytes: 8192, algorithmBandwidth: 8192 / 1e-5 });
    expect(of('all-gather')).toEqual({ collective: 'all-gather', count: 1, totalNs: 10_000, bytes: null, algorithmBandwidth: null });
    expect(of('broadcast')).toEqual({ collective: 'broadcast', count: 1, totalNs: 10_000, bytes: null, algorithmBandwidth: null });
    // Most time first, ties by name.
    expect(c.collectives.map((k) => k.collective)).toEqual(['all-reduce', 'all-to-all', 'send-recv', 'all-gather', 'broadcast', 'gather']);
    // Kernels 1–7 lie in a collective's or a group's range; 1, 2, 3, 4 and 7's two carried sizes.
    expect(c.ncclRanges).toEqual({ kernels: 12, fromRanges: 9, withBytes: 6 });
  });

  it("splits one kernel name by the collective its calls ran: NCCL's SendRecv kernel as all-to-all, gather and send-recv", () => {
    const sendRecv = c.kernels.filter((k) => k.name === SEND_RECV).map(({ collective, count, totalNs, bytes }) => ({ collective, count, totalNs, bytes }));
    expect(sendRecv).toEqual([
      { collective: 'all-to-all', count: 1, totalNs: 500_000, bytes: 1 << 20 },
      { collective: 'send-recv', count: 2, totalNs: 20_000, bytes: 8192 },
      { collective: 'gather', count: 1, totalNs: 10_000, bytes: 4096 },
    ]);
    const allReduce = c.kernels.find((k) => k.name === ALL_REDUCE)!;
    expect(allReduce).toMatchObject({ collective: 'all-reduce', algorithm: 'RING', protocol: 'LL', dtype: 'f32', op: 'sum', count: 6, bytes: 18777216 });
  });

  it('respects the scope: the launches and kernels of a window only', () => {
    const w = analysed(file, { kind: 'window', startNs: 2_000_000, endNs: 4_500_000 }).communication;
    expect(w.collectives.map(({ collective, count, bytes }) => ({ collective, count, bytes }))).toEqual([
      { collective: 'all-to-all', count: 1, bytes: 1 << 20 },
      { collective: 'gather', count: 1, bytes: 4096 }, // ties of time by name
      { collective: 'send-recv', count: 1, bytes: 8192 },
    ]);
  });

  it('report: bytes and GB/s in the collectives table, and where the kinds came from', () => {
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'report', file, '--whole'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    // 1 MiB in 0.5 ms: 2.1 GB/s.
    expect(r.stdout).toMatch(/^\s+all-to-all\s+1\s+500 µs\s+1\.00 MiB\s+2\.1\s*$/m);
    expect(r.stdout).toMatch(/^\s+broadcast\s+1\s+10\.0 µs\s*$/m); // no size: blank
    expect(r.stdout).toMatch(/^\s+all-to-all\s+-\s+1\s+500 µs\s+ncclDevKernel_SendRecv$/m);
    expect(r.stdout).toContain("kinds from NCCL's NVTX ranges for 9 of 12 NCCL kernels; bytes (the calls' message sizes) for 6");
    const json = spawnSync(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'report', file, '--whole', '--json'], {
      encoding: 'utf8',
    });
    expect((JSON.parse(json.stdout) as { communication: unknown }).communication).toEqual(JSON.parse(JSON.stringify(c)));
  });
});

describe('on the real NCCL recordings (NCCL 2.28.9, recorded before payloads were kept)', () => {
  for (const name of ['nccl-1gpu-serial', 'nccl-1gpu-overlap']) {
    it(`${name}: every all-reduce kernel named from its ncclAllReduce range, no bytes`, () => {
      const c = analysed(path.join(repoRoot, `test/fixtures/recordings/${name}.sqlite`)).communication;
      expect(c.ncclRanges.kernels).toBeGreaterThan(0);
      expect(c.ncclRanges).toEqual({ kernels: c.ncclRanges.kernels, fromRanges: c.ncclRanges.kernels, withBytes: 0 });
      expect(c.collectives).toEqual([
        { collective: 'all-reduce', count: c.ncclRanges.kernels, totalNs: expect.any(Number) as number, bytes: null, algorithmBandwidth: null },
      ]);
      // Both ranks communicate, and each GPU's time still adds up to the span.
      expect(c.ranks.filter((r) => r.total.communicationNs > 0).length).toBe(2);
      for (const r of c.ranks) for (const d of r.devices) expect(d.computeNs + d.exposedNs + d.copyNs + d.idleNs).toBe(d.spanNs);
    });
  }
});

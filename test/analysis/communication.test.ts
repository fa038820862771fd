// Communication (profiler/analysis/communication.ts, issue 13):
//
// - NCCL kernel names: every kernel NCCL defines at seven releases, taken
//   from NVIDIA/nccl's own sources (test/fixtures/nccl/kernel-names.tsv,
//   provenance beside it), each as CUPTI stores it (mangled), as Kineto and
//   Nsight Systems show it (demangled) and bare; and no kernel of any
//   recording fixture is taken for communication.
// - The per-rank breakdown and the overlap on recordings CONSTRUCTED FOR
//   THE ARITHMETIC with the importers' RecordingWriter: hand-placed
//   intervals with hand-computed expectations. They are not GPU recordings
//   and say nothing about how NCCL behaves; recordings of real NCCL jobs
//   come from the two-GPU machine (issue 13).
// - The overlap against Holistic Trace Analysis's own computation, written
//   out as HTA writes it, on random single-GPU traces.
// - On every recording fixture without NCCL: no communication, and each
//   rank's compute + copies + idle add up to the span on every GPU (the
//   nccl-* fixtures: test/analysis/nccl-ranges.test.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { communicationPart, OpRole, opRoles } from '../../profiler/analysis/communication.ts';
import { readCommunicationInputs, readPeerCopyIds } from '../../profiler/analysis/load/communication.ts';
import { commKernelOf, kernelSymbol } from '../../profiler/cuda/nccl.ts';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { overlapByDevice } from '../../profiler/analysis/overlap.ts';
import { allocateOps, type GpuOps } from '../../profiler/analysis/trace.ts';
import { COLLECTIVES, type CommKernel, type RankDeviceTime } from '../../profiler/contract/communication.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { RecordingWriter } from '../../profiler/import/recording-writer.ts';
import { demangle } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const dir = tempDir('communication');

/** The real NCCL recordings (nccl-*.sqlite): their communication is checked in nccl-ranges.test.ts. */
/** Fixtures with communication: NCCL jobs and the peer copies between two GPUs. */
const isNcclFixture = (file: string) => file.startsWith('nccl-') || file.startsWith('peer-copies-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function analysed(file: string, scope?: Scope): Analysis {
  const db = openRecording(file, { readonly: true });
  try {
    return analyze(db, { scope });
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------
// Names

const namesFile = path.join(repoRoot, 'test/fixtures/nccl/kernel-names.tsv');
const names = fs
  .readFileSync(namesFile, 'utf8')
  .split('\n')
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => l.split('\t') as [string, string]);

/**
 * The parameters of each release's kernels (Itanium mangling), from the
 * declarations in NCCL's sources at that tag: (struct ncclColl) in
 * 2.3–2.7; (ncclDevComm*, ncclWorkElem) in 2.12; (ncclDevComm*, uint64_t,
 * ncclWork*) in 2.18 and 2.19; ncclDevKernelArgs4K =
 * ncclDevKernelArgsStorage<4096> in 2.30 (src/include/device.h);
 * ncclSymDevArgs (2.27) and ncclSymkDevWorkArgs4K (2.30) for the
 * symmetric kernels.
 */
function mangledParameters(version: string, name: string): string {
  if (name.startsWith('ncclSymkDevKernel_')) return '21ncclSymkDevWorkArgs4K';
  if (name.startsWith('ncclSymDevKernel_')) return '14ncclSymDevArgs';
  switch (version) {
    case 'v2.3.7-1':
    case 'v2.7.8-1':
      return '8ncclColl';
    case 'v2.12.12-1':
      return 'P11ncclDevComm12ncclWorkElem';
    case 'v2.18.6-1':
    case 'v2.19.1-1':
      return 'P11ncclDevCommmP8ncclWork';
    default:
      return '24ncclDevKernelArgsStorageILm4096EE';
  }
}

/** The collective a name spells, read independently of the classifier: its first collective word. */
function spelledCollective(name: string): string {
  const word = /(AllReduce|AllGatherV|AllGather|ReduceScatter|Reduce|Broadcast|SendRecv|Generic)/.exec(name)?.[1];
  const of: Record<string, string> = {
    AllReduce: 'all-reduce',
    AllGatherV: 'all-gather',
    AllGather: 'all-gather',
    ReduceScatter: 'reduce-scatter',
    Reduce: 'reduce',
    Broadcast: 'broadcast',
    SendRecv: 'send-recv',
    Generic: 'other',
  };
  return word ? of[word]! : 'none';
}

const NCCL_TYPES = ['i8', 'u8', 'i32', 'u32', 'i64', 'u64', 'f16', 'bf16', 'f32', 'f64', 'f8e4m3', 'f8e5m2'];
const NCCL_OPS = ['sum', 'prod', 'min', 'max', 'minmax', 'premulsum', 'sumpostdiv', 'avg'];

describe("NCCL's kernel names, from NCCL's sources (test/fixtures/nccl/kernel-names.tsv)", () => {
  it('holds the seven releases', () => {
    expect(new Set(names.map(([v]) => v))).toEqual(new Set(['v2.3.7-1', 'v2.7.8-1', 'v2.12.12-1', 'v2.18.6-1', 'v2.19.1-1', 'v2.27.3-1', 'v2.30.7-1']));
    expect(names.length).toBeGreaterThan(2000);
  });

  it('every one is communication, labelled with the collective it spells, the same bare, mangled and demangled', () => {
    const mangled = names.map(([v, n]) => `_Z${n.length}${n}${mangledParameters(v, n)}`);
    const demangled = demangle(mangled);
    for (const [k, [, name]] of names.entries()) {
      const label = commKernelOf(name);
      expect(label, name).not.toBeNull();
      expect(label!.collective, name).toBe(spelledCollective(name));
      // CUPTI's form and the demangler's (Kineto, nsys) read the same.
      expect(demangled[k], mangled[k]).toMatch(new RegExp(`^${name}\\(`));
      expect(kernelSymbol(mangled[k]!)).toBe(name);
      expect(kernelSymbol(demangled[k]!)).toBe(name);
      expect(commKernelOf(mangled[k]!), mangled[k]).toEqual(label);
      expect(commKernelOf(demangled[k]!), demangled[k]!).toEqual(label);
      // What the fields hold is in NCCL's vocabulary.
      if (label!.protocol !== undefined) expect(['LL', 'LL128', 'SIMPLE']).toContain(label!.protocol);
      if (label!.dtype !== undefined) expect(NCCL_TYPES, name).toContain(label!.dtype);
      if (label!.op !== undefined) expect(NCCL_OPS, name).toContain(label!.op);
      if (label!.algorithm !== undefined) expect(label!.algorithm, name).toMatch(/^[A-Za-z0-9]+(_[A-Za-z0-9]+)*$/);
      // Only reductions carry a data type and an operation (the others' Sum_int8_t / copy_i8 are placeholders).
      const reducing = ['all-reduce', 'reduce', 'reduce-scatter'].includes(label!.collective);
      if (!reducing) expect(label!.dtype === undefined && label!.op === undefined, name).toBe(true);
    }
  });

  // One of each form, field by field (names as in the fixture).
  const cases: [string, CommKernel][] = [
    ['ncclAllReduceLLKernel_sum_f32', { collective: 'all-reduce', protocol: 'LL', dtype: 'f32', op: 'sum' }], // 2.3
    ['ncclAllReduceKernel_max_f16', { collective: 'all-reduce', protocol: 'SIMPLE', dtype: 'f16', op: 'max' }], // 2.3
    ['ncclBroadcastLLKernel_copy_i8', { collective: 'broadcast', protocol: 'LL' }], // 2.3
    ['ncclAllReduceRingLLKernel_sum_f32', { collective: 'all-reduce', algorithm: 'RING', protocol: 'LL', dtype: 'f32', op: 'sum' }], // 2.7
    ['ncclReduceScatterCollNetLLKernel_prod_u64', { collective: 'reduce-scatter', algorithm: 'COLLNET', protocol: 'LL', dtype: 'u64', op: 'prod' }], // 2.7
    ['ncclSendRecvKernel_copy_i8', { collective: 'send-recv' }], // 2.7
    ['ncclKernel_AllReduce_RING_LL_Sum_float', { collective: 'all-reduce', algorithm: 'RING', protocol: 'LL', dtype: 'f32', op: 'sum' }], // 2.12
    [
      'ncclKernel_AllReduce_COLLNET_DIRECT_LL_Sum___nv_bfloat16',
      { collective: 'all-reduce', algorithm: 'COLLNET_DIRECT', protocol: 'LL', dtype: 'bf16', op: 'sum' },
    ], // 2.18
    [
      'ncclKernel_ReduceScatter_NVLS_TREE_LL_PreMulSum_half',
      { collective: 'reduce-scatter', algorithm: 'NVLS_TREE', protocol: 'LL', dtype: 'f16', op: 'premulsum' },
    ], // 2.18
    ['ncclKernel_AllGather_RING_LL_Sum_int8_t', { collective: 'all-gather', algorithm: 'RING', protocol: 'LL' }], // 2.18
    ['ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t', { collective: 'send-recv' }], // 2.18
    ['ncclDevKernel_AllReduce_Sum_f32_RING_LL', { collective: 'all-reduce', algorithm: 'RING', protocol: 'LL', dtype: 'f32', op: 'sum' }], // 2.30
    ['ncclDevKernel_AllReduce_Sum_u32_TREE_LL', { collective: 'all-reduce', algorithm: 'TREE', protocol: 'LL', dtype: 'u32', op: 'sum' }], // 2.30
    ['ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL', { collective: 'reduce-scatter', algorithm: 'RING', protocol: 'LL', dtype: 'bf16', op: 'sum' }], // 2.30
    ['ncclDevKernel_Reduce_Sum_f8e5m2_RING_LL', { collective: 'reduce', algorithm: 'RING', protocol: 'LL', dtype: 'f8e5m2', op: 'sum' }], // 2.30
    ['ncclDevKernel_AllGather_RING_LL', { collective: 'all-gather', algorithm: 'RING', protocol: 'LL' }], // 2.30
    ['ncclDevKernel_AllGatherV_RING_LL', { collective: 'all-gather', algorithm: 'RING', protocol: 'LL' }], // 2.30
    ['ncclDevKernel_Broadcast_RING_LL', { collective: 'broadcast', algorithm: 'RING', protocol: 'LL' }], // 2.30
    ['ncclDevKernel_SendRecv', { collective: 'send-recv' }], // 2.30
    ['ncclDevKernel_Generic', { collective: 'other' }], // 2.19, 2.30
    ['ncclSymDevKernel_AllReduce_AGxLL_R_sum_f32', { collective: 'all-reduce', algorithm: 'AGxLL_R', dtype: 'f32', op: 'sum' }], // 2.27
    ['ncclSymkDevKernel_AllReduce_RSxLDMC_AGxSTMC_sum_bf16', { collective: 'all-reduce', algorithm: 'RSxLDMC_AGxSTMC', dtype: 'bf16', op: 'sum' }], // 2.30
    ['ncclSymkDevKernel_ReduceScatter_RailA2A_LsaLD_avg_f16', { collective: 'reduce-scatter', algorithm: 'RailA2A_LsaLD', dtype: 'f16', op: 'avg' }], // 2.30
    ['ncclSymkDevKernel_AllGather_RailRing_LsaSTMC', { collective: 'all-gather', algorithm: 'RailRing_LsaSTMC' }], // 2.30
  ];
  for (const [name, want] of cases) {
    it(name, () => {
      expect(
        names.some(([, n]) => n === name),
        `${name} is in the fixture`,
      ).toBe(true);
      expect(commKernelOf(name)).toEqual(want);
    });
  }

  it("RCCL's generic kernels (ROCm/rccl src/device/common.h) and any other nccl… kernel are communication of kind 'other'", () => {
    expect(commKernelOf('ncclDevKernel_Generic_4(ncclDevComm*, channelMasks, ncclWork*)')).toEqual({ collective: 'other' });
    expect(commKernelOf('ncclDevKernelDebug_Generic_4')).toEqual({ collective: 'other' });
    expect(commKernelOf('ncclSomethingNewKernel')).toEqual({ collective: 'other' });
  });

  it('no kernel of any recording fixture without NCCL is communication', () => {
    const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
    const seen = new Set<string>();
    for (const f of fs.readdirSync(fixtures).filter((x) => x.endsWith('.sqlite') && !isNcclFixture(x))) {
      const db = new Database(path.join(fixtures, f), { readonly: true });
      for (const n of db.prepare('SELECT DISTINCT s.value FROM kernels k JOIN strings s ON s.id = k.name_id').pluck().all() as string[]) seen.add(n);
      db.close();
    }
    expect(seen.size).toBeGreaterThan(20);
    for (const n of seen) expect(commKernelOf(n), n).toBeNull();
    // Nor the names around them that merely mention a collective.
    for (const n of ['_ZN2at6native13reduce_kernelILi512ELi1EEEvT1_', 'void cub::DeviceReduceKernel<…>(…)', 'allreduce_kernel', 'all_gather_into_tensor']) {
      expect(commKernelOf(n), n).toBeNull();
    }
  });
});

// ---------------------------------------------------------------------------
// Breakdown on constructed recordings

const ALL_REDUCE = '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE';
const GEMM = '_Z4gemmPKfS0_Pf';

interface Op {
  pid: number;
  device: number;
  stream: number;
  start: number;
  end: number;
}

/**
 * A recording CONSTRUCTED FOR THE ARITHMETIC (not a GPU recording): two
 * processes ("ranks"), two GPUs, times in ns from 0.
 *
 *   pid 100, GPU 0: gemm [0,100) and [150,250) on stream 7; all-reduce [50,200) on
 *                   stream 8; HtoD copy [240,300) and memset [300,320) on stream 9;
 *                   GPU 1: gemm [0,10)
 *   pid 200, GPU 1: gemm [20,120); all-reduce [120,200); PtoP copy [200,260);
 *                   DtoD copy GPU 1 → GPU 0 [260,280) (a peer copy); DtoD copy
 *                   within GPU 1 [280,290) (not a peer copy)
 */
function constructed(file: string, opts: { ranks?: boolean } = {}): string {
  const w = new RecordingWriter(file, { overwrite: true, originNs: 0 });
  w.device(0, { name: 'constructed GPU 0' });
  w.device(1, { name: 'constructed GPU 1' });
  let correlation = 1;
  const kernel = (o: Op, name: string) => w.kernel({ ...o, context: o.pid * 10 + o.device, correlation: correlation++, name });
  const copy = (o: Op, copyKind: number, bytes: number) =>
    w.memcpy({ ...o, context: o.pid * 10 + o.device, correlation: correlation++, bytes, copyKind, srcKind: 3, dstKind: 3, async: true });
  // Written in start order per table, as importers do.
  kernel({ pid: 100, device: 0, stream: 7, start: 0, end: 100 }, GEMM);
  kernel({ pid: 100, device: 1, stream: 7, start: 0, end: 10 }, GEMM);
  kernel({ pid: 200, device: 1, stream: 7, start: 20, end: 120 }, GEMM);
  kernel({ pid: 100, device: 0, stream: 8, start: 50, end: 200 }, ALL_REDUCE);
  kernel({ pid: 200, device: 1, stream: 8, start: 120, end: 200 }, ALL_REDUCE);
  kernel({ pid: 100, device: 0, stream: 7, start: 150, end: 250 }, GEMM);
  copy({ pid: 200, device: 1, stream: 9, start: 200, end: 260 }, 10, 1 << 20); // PtoP
  copy({ pid: 100, device: 0, stream: 9, start: 240, end: 300 }, 1, 4096); // HtoD
  copy({ pid: 200, device: 1, stream: 9, start: 260, end: 280 }, 8, 1 << 19); // DtoD, to GPU 0 (below)
  copy({ pid: 200, device: 1, stream: 9, start: 280, end: 290 }, 8, 1000); // DtoD within GPU 1
  w.memset({
    pid: 100,
    device: 0,
    stream: 9,
    start: 300,
    end: 320,
    context: 1000,
    correlation: correlation++,
    bytes: 64,
    value: 0,
    memoryKind: 3,
    async: true,
  });
  w.finish({ command: 'constructed for the arithmetic: not a GPU recording' });
  const db = new Database(file);
  // The writer leaves peer device ids out (importers do not know them): set them as the collector stores a copy.
  db.exec(`UPDATE memcpys SET src_device_id = device_id, dst_device_id = device_id`);
  db.exec(`UPDATE memcpys SET dst_device_id = (SELECT id FROM devices WHERE ordinal = 0) WHERE start_ns = 260`);
  if (opts.ranks) {
    // The columns of schema 8 (rank, local_rank, world_size), added where the file is older; set as a launcher's environment gives them.
    const have = new Set((db.prepare('PRAGMA table_info(processes)').all() as { name: string }[]).map((x) => x.name));
    for (const c of ['rank', 'local_rank', 'world_size']) if (!have.has(c)) db.exec(`ALTER TABLE processes ADD COLUMN ${c} INTEGER`);
    db.exec(`UPDATE processes SET rank = 1, local_rank = 1, world_size = 2 WHERE pid = 100`);
    db.exec(`UPDATE processes SET rank = 0, local_rank = 0, world_size = 2 WHERE pid = 200`);
  }
  db.close();
  return file;
}

const dev = (d: Partial<RankDeviceTime>) => expect.objectContaining(d);

describe('the breakdown on a recording constructed for the arithmetic (not a GPU recording)', () => {
  const file = constructed(path.join(dir, 'constructed.sqlite'));
  const whole = analysed(file, { kind: 'whole' });
  const c = whole.communication;

  it('finds the one peer DtoD copy by its devices', () => {
    const db = openRecording(file, { readonly: true });
    const ids = readPeerCopyIds(db);
    const want = db.prepare('SELECT id FROM memcpys WHERE start_ns = 260').pluck().get() as number;
    db.close();
    expect([...ids]).toEqual([want]);
    const roles = opRoles(whole.trace, ids);
    const { ops } = whole.trace;
    const role = (start: number, device: number) => roles[[...Array(ops.length).keys()].find((i) => ops.start[i] === start && ops.device[i] === device)!];
    expect(role(0, 1)).toBe(OpRole.Compute);
    expect(role(50, 1)).toBe(OpRole.Communication);
    expect(role(200, 2)).toBe(OpRole.Communication); // PtoP
    expect(role(260, 2)).toBe(OpRole.Communication); // DtoD to another GPU
    expect(role(280, 2)).toBe(OpRole.Copy); // DtoD within one GPU
    expect(role(240, 1)).toBe(OpRole.Copy);
    expect(role(300, 1)).toBe(OpRole.Copy); // memset
  });

  it('per rank and GPU, by hand', () => {
    expect(c.present).toBe(true);
    expect(c.ranks.map((r) => r.pid)).toEqual([100, 200]);
    const [a, b] = c.ranks;
    // The scope's GPU span: 0 → 320 on every row.
    // pid 100, GPU 0: compute [0,100)+[150,250) = 200; communication [50,200) = 150,
    // hidden = [50,100)+[150,200) = 100, exposed 50; copies [240,320) outside compute and
    // communication = [250,320) = 70; idle 0. 200 + 50 + 70 + 0 = 320.
    expect(a!.devices).toEqual([
      dev({ gpu: 0, spanNs: 320, computeNs: 200, communicationNs: 150, hiddenNs: 100, exposedNs: 50, copyNs: 70, idleNs: 0, overlap: 100 / 150 }),
      // GPU 1: gemm [0,10) only.
      dev({ gpu: 1, spanNs: 320, computeNs: 10, communicationNs: 0, hiddenNs: 0, exposedNs: 0, copyNs: 0, idleNs: 310, overlap: null }),
    ]);
    expect(a!.total).toEqual({ spanNs: 640, computeNs: 210, communicationNs: 150, hiddenNs: 100, exposedNs: 50, copyNs: 70, idleNs: 310, overlap: 100 / 150 });
    // pid 200, GPU 1: compute [20,120) = 100; communication [120,200)+[200,260)+[260,280) = 160,
    // none hidden; copies [280,290) = 10; idle 320 − 270 = 50. 100 + 160 + 10 + 50 = 320.
    expect(b!.devices).toEqual([
      dev({ gpu: 1, spanNs: 320, computeNs: 100, communicationNs: 160, hiddenNs: 0, exposedNs: 160, copyNs: 10, idleNs: 50, overlap: 0 }),
    ]);
    expect(b!.rank).toBeNull(); // no rank recorded (an importer knows none)
  });

  it('collectives, peer copies and kernels', () => {
    // Launched outside any NCCL NVTX range (the recording has none): no bytes.
    expect(c.collectives).toEqual([{ collective: 'all-reduce', count: 2, totalNs: 150 + 80, bytes: null, algorithmBandwidth: null }]);
    expect(c.ncclRanges).toEqual({ kernels: 2, fromRanges: 0, withBytes: 0 });
    expect(c.peerCopies).toEqual({ count: 2, bytes: (1 << 20) + (1 << 19), totalNs: 60 + 20 });
    expect(c.kernels).toEqual([
      {
        name: ALL_REDUCE,
        demangledName: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)',
        collective: 'all-reduce',
        algorithm: 'RING',
        protocol: 'LL',
        dtype: 'f32',
        op: 'sum',
        count: 2,
        totalNs: 230,
        bytes: null,
      },
    ]);
    for (const k of c.collectives) expect(COLLECTIVES).toContain(k.collective);
  });

  it('respects the scope: a window [0, 150) keeps the operations that run in it, clipped to it', () => {
    const w = analysed(file, { kind: 'window', startNs: 0, endNs: 150 }).communication;
    // Kept: gemms [0,100) (GPU 0) and [0,10) (GPU 1) of pid 100, its all-reduce [50,200) as [50,150);
    // pid 200's gemm [20,120) and all-reduce [120,200) as [120,150). GPU span 0 → 150.
    expect(w.ranks[0]!.devices).toEqual([
      dev({ gpu: 0, spanNs: 150, computeNs: 100, communicationNs: 100, hiddenNs: 50, exposedNs: 50, copyNs: 0, idleNs: 0, overlap: 50 / 100 }),
      dev({ gpu: 1, spanNs: 150, computeNs: 10, communicationNs: 0, idleNs: 140 }),
    ]);
    expect(w.ranks[1]!.devices).toEqual([
      dev({ gpu: 1, spanNs: 150, computeNs: 100, communicationNs: 30, hiddenNs: 0, exposedNs: 30, copyNs: 0, idleNs: 20, overlap: 0 }),
    ]);
    expect(w.peerCopies.count).toBe(0);
  });

  it('reads rank, local rank and world size where the processes table has them, and orders by rank', () => {
    const ranked = analysed(constructed(path.join(dir, 'constructed-ranks.sqlite'), { ranks: true }), { kind: 'whole' }).communication;
    expect(ranked.ranks.map((r) => [r.rank, r.localRank, r.worldSize, r.pid])).toEqual([
      [0, 0, 2, 200],
      [1, 1, 2, 100],
    ]);
  });

  it('report: the Communication section and --json (the CLI)', () => {
    const report = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'report', file, '--whole', ...args], { encoding: 'utf8' });
    const json = report('--json');
    expect(json.status).toBe(0);
    const j = JSON.parse(json.stdout) as { reportVersion: number; communication: unknown };
    expect(j.reportVersion).toBe(9);
    expect(j.communication).toEqual(JSON.parse(JSON.stringify(c)));
    const text = report();
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('Communication (NCCL kernels and peer copies)');
    // pid 100 on GPU 0: 200 ns compute (62.5% of 320), 150 communication, 100 hidden, 50 exposed, 70 copies, overlap 66.7%.
    expect(text.stdout).toMatch(/^\s+100\s+0\s+200 ns 62\.5%\s+150 ns 46\.9%\s+100 ns\s+50 ns 15\.6%\s+70 ns 21\.9%\s+0 ns 0\.0%\s+66\.7%$/m);
    expect(text.stdout).toMatch(/^\s+all-reduce\s+2\s+230 ns\s*$/m);
    expect(text.stdout).toMatch(/^\s+peer copies\s+2\s+80 ns/m);
    expect(text.stdout).toMatch(/^\s+all-reduce\s+RING LL f32 sum\s+2\s+230 ns\s+ncclDevKernel_AllReduce_Sum_f32_RING_LL$/m);
    // A recording without communication has no such section.
    const none = spawnSync(
      process.execPath,
      [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'report', path.join(repoRoot, 'test/fixtures/recordings/normalise-concurrent.sqlite')],
      { encoding: 'utf8' },
    );
    expect(none.status).toBe(0);
    expect(none.stdout).not.toContain('Communication');
  });

  it("the API's stats carry the same", () => {
    const q = new RecordingQuery('constructed', file);
    try {
      expect(q.stats({ kind: 'whole' }).communication).toEqual(c);
    } finally {
      q.close();
    }
  });
});

// ---------------------------------------------------------------------------
// HTA's overlap

/**
 * Holistic Trace Analysis's comm/comp overlap of one rank, as
 * hta/analyzers/communication_analysis.py computes it
 * (get_comm_comp_overlap_value): merge the communication kernels' and the
 * computation kernels' intervals each (merge_kernel_intervals), sweep their
 * ends with +1/−1 (communication) and +2/−2 (computation), sum the time the
 * running status is 3, divide by the merged communication time.
 */
function htaOverlap(kernels: { name: string; ts: number; end: number }[]): number {
  const merge = (k: { ts: number; end: number }[]) => {
    const sorted = [...k].sort((x, y) => x.ts - y.ts);
    const out: { ts: number; end: number }[] = [];
    let maxEnd = -Infinity;
    for (const x of sorted) {
      // group = (ts > previous end's cummax).cumsum(): a new group when strictly after.
      if (x.ts > maxEnd) out.push({ ts: x.ts, end: x.end });
      else out.at(-1)!.end = Math.max(out.at(-1)!.end, x.end);
      maxEnd = Math.max(maxEnd, x.end);
    }
    return out;
  };
  const isComm = (n: string) => /(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)/.test(n);
  const comm = merge(kernels.filter((k) => isComm(k.name)));
  const comp = merge(kernels.filter((k) => !isComm(k.name)));
  const status = [
    ...comm.flatMap((k) => [
      { time: k.ts, s: 1 },
      { time: k.end, s: -1 },
    ]),
    ...comp.flatMap((k) => [
      { time: k.ts, s: 2 },
      { time: k.end, s: -2 },
    ]),
  ].sort((x, y) => x.time - y.time);
  let running = 0;
  let overlap = 0;
  for (let k = 0; k < status.length; k++) {
    running += status[k]!.s;
    if (running === 3 && k + 1 < status.length) overlap += status[k + 1]!.time - status[k]!.time;
  }
  return overlap / comm.reduce((t, k) => t + k.end - k.ts, 0);
}

describe("the overlap is HTA's comm/comp overlap for a rank on one GPU (random traces constructed for the arithmetic)", () => {
  // Deterministic pseudo-random numbers (xorshift).
  let seed = 0x2545f491;
  const rnd = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  for (let t = 0; t < 12; t++) {
    it(`trace ${t}`, () => {
      const file = path.join(dir, `random-${t}.sqlite`);
      const w = new RecordingWriter(file, { overwrite: true, originNs: 0 });
      w.device(0, { name: 'constructed GPU' });
      const kernels: { name: string; ts: number; end: number; stream: number }[] = [];
      for (let k = 0; k < 60; k++) {
        const ts = rnd(20_000);
        const comm = rnd(3) === 0;
        // Distinct starts: HTA's sweep sorts ties in no defined order.
        if (kernels.some((x) => x.ts === ts)) continue;
        kernels.push({
          name: comm ? 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)' : 'gemm',
          ts,
          end: ts + 1 + rnd(900),
          stream: comm ? 8 : 7 + rnd(2) * 2,
        });
      }
      kernels.sort((x, y) => x.ts - y.ts);
      for (const [k, x] of kernels.entries())
        w.kernel({ start: x.ts, end: x.end, device: 0, context: 1, stream: x.stream, pid: 1, correlation: k + 1, name: x.name });
      w.finish({ command: 'constructed for the arithmetic' });
      const ours = analysed(file, { kind: 'whole' }).communication.ranks[0]!.total.overlap!;
      expect(ours).toBeCloseTo(htaOverlap(kernels), 12);
    });
  }
});

// ---------------------------------------------------------------------------
// Every recording fixture

describe('on every recording fixture without communication (real recordings)', () => {
  const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
  for (const f of fs.readdirSync(fixtures).filter((x) => x.endsWith('.sqlite') && !isNcclFixture(x))) {
    it(f, () => {
      const a = analysed(path.join(fixtures, f));
      const c = a.communication;
      expect(c.present).toBe(false);
      expect(c.collectives).toEqual([]);
      expect(c.kernels).toEqual([]);
      expect(c.peerCopies.count).toBe(0);
      const span = a.diagnosis.context.gpuSpan.end - a.diagnosis.context.gpuSpan.start;
      // Every process with GPU operations in the scope has a row.
      expect(new Set(c.ranks.map((r) => r.pid))).toEqual(new Set(a.trace.ops.pid));
      for (const r of c.ranks) {
        for (const d of r.devices) {
          expect(d.communicationNs).toBe(0);
          expect(d.overlap).toBeNull();
          expect(d.spanNs).toBe(span);
          expect(d.computeNs + d.copyNs + d.idleNs).toBe(d.spanNs);
          expect(Math.min(d.computeNs, d.copyNs, d.idleNs)).toBeGreaterThanOrEqual(0);
        }
        expect(r.total.computeNs + r.total.copyNs + r.total.idleNs).toBe(r.total.spanNs);
      }
      // One process: its compute is the device's compute busy time, compute + copies everything's.
      if (c.ranks.length === 1) {
        for (const o of overlapByDevice(a.trace).filter((x) => x.all.count > 0)) {
          const d = c.ranks[0]!.devices.find((x) => x.deviceId === o.deviceId)!;
          expect(d.computeNs).toBe(o.compute.union);
          expect(d.computeNs + d.copyNs).toBe(o.all.union);
        }
      }
    });
  }
});

describe("a process's busy time read from the devices' unions (one process a device, no communication) is what the breakdown's pass measures", () => {
  const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
  for (const f of ['torch_streams.sqlite', 'matmul-multi-gpu-h200x2.sqlite', 'normalise-concurrent.sqlite', 'matmul-multi-gpu.sqlite']) {
    it(f, () => {
      const db = openRecording(path.join(fixtures, f), { readonly: true });
      try {
        const { trace } = analyze(db, { scope: { kind: 'whole' } });
        const inputs = readCommunicationInputs(db);
        // The same operations and one more, empty, of another process on the first op's device: the pass measures them all.
        const n = trace.ops.length;
        const ops = allocateOps(n + 1);
        for (const [k, column] of Object.entries(trace.ops))
          if (typeof column !== 'number') (ops[k as keyof GpuOps] as Float64Array).set(column.subarray(0, n));
        ops.device[n] = trace.ops.device[0]!;
        ops.pid[n] = -7;
        ops.kind[n] = 1;
        ops.start[n] = ops.end[n] = trace.ops.start[n - 1]!;
        const measured = communicationPart({ ...trace, ops }, inputs).busy.filter((b) => b.pid !== -7);
        expect(communicationPart(trace, inputs).busy).toEqual(measured);
      } finally {
        db.close();
      }
    });
  }
});

describe('peer copies between two H200s (peer-copies-h200x2, a tensor copied GPU 0 → GPU 1 and back, 5 times each)', () => {
  it("CUPTI's peer-to-peer copies are communication: 10 of 64 MiB, none of them compute or plain copies", () => {
    const a = analysed(path.join(repoRoot, 'test/fixtures/recordings/peer-copies-h200x2.sqlite'));
    expect(a.communication.peerCopies.count).toBe(10);
    expect(a.communication.peerCopies.bytes).toBe(10 * 64 * 2 ** 20);
    expect(a.communication.present).toBe(true);
    expect(a.communication.kernels).toEqual([]);
  });
});

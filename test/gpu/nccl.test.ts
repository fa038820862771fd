// `npm run test:gpu`, part three (issue 13): a data-parallel job of two
// ranks, one GPU each, NCCL under PyTorch (test/gpu/scripts/nccl_overlap.py
// under torchrun). Skipped without two GPUs or without PyTorch.
//
//  * serial vs overlap: the all-reduces after all of a step's computation
//    on the compute stream, or each on NCCL's stream as its bucket is
//    ready. The serial run gets the serialized-collective finding on both
//    ranks, the overlapped run none; the serial run's what-if is within 15%
//    of the overlapped run's measured GPU span.
//  * straggler: the serial run with rank 1 sleeping before each step's
//    collectives: rank 1 is named, with about the time it made rank 0 wait.
//  * two nodes: the serial program as a 2-node torchrun on this host, one
//    recorder per node (one GPU each), merged: the same counts as the run
//    recorded by one recorder, clocks aligned by the collectives.
//  * peer copies between the GPUs: counted as communication.
//
// STREAMSCOPE_FIXTURE_DIR=dir keeps the recordings (fixtures with provenance).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { devices } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { record } from '../../profiler/record/recorder.ts';
import { openRecording } from '../../profiler/store/database.ts';

// NVLink multicast stays off on shared machines (it can take the host's GPUs down).
Object.assign(process.env, { NCCL_NVLS_ENABLE: '0', TORCH_SYMM_MEM_DISABLE_MULTICAST: '1', NVSHMEM_DISABLE_NVLS: '1', PYTHONUNBUFFERED: '1' });
for (const v of ['RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK', 'SLURM_PROCID', 'PMIX_RANK']) delete process.env[v];

const gpus = devices().devices.length;
const torch = spawnSync('python3', ['-c', 'import torch, torch.distributed; print(torch.cuda.device_count())'], { encoding: 'utf8' });
const skip = gpus < 2 ? `needs two GPUs, found ${gpus}` : torch.status !== 0 ? `no PyTorch: ${torch.stderr.trim().split('\n').at(-1)}` : false;
if (skip) console.log(`# GPU tests (NCCL) skipped: ${skip}`);

const keepDir = process.env.STREAMSCOPE_FIXTURE_DIR;
const workDir = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ss-gpu-nccl-'));
fs.mkdirSync(workDir, { recursive: true });
const table: string[] = [];
after(() => {
  if (table.length) console.log('\n' + table.join('\n'));
  if (!keepDir) fs.rmSync(workDir, { recursive: true, force: true });
});

const torchrun = spawnSync('sh', ['-c', 'command -v torchrun'], { encoding: 'utf8' }).status === 0 ? ['torchrun'] : ['python3', '-m', 'torch.distributed.run'];
const program = path.join(repoRoot, 'test/gpu/scripts/nccl_overlap.py');
const STEPS = 20;
const DELAY_MS = 20;
// 16 MB results, 256 MB gradients per bucket: on NVLink the all-reduces weigh about as much as the matmuls.
const ARGS = ['--steps', String(STEPS), '--size', '2048', '--grad-scale', '16'];
/** The measured steps (the program's warm-up step, which connects the ranks and loads the kernels, is outside them). */
const STEPS_SCOPE: Scope = { kind: 'range', name: 'step' };

async function recordJob(name: string, argv: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const file = path.join(workDir, `${name}.sqlite`);
  const r = await record({ output: file, overwrite: true, argv, stdio: 'pipe', env: env ? { ...process.env, ...env } : undefined });
  assert.equal(r.exitCode, 0, `${argv.join(' ')}: ${r.stderr}${r.stdout}`);
  assert.ok(r.complete, `incomplete: ${r.incompleteReason}`);
  assert.match(r.stdout, /nccl_overlap: ok/);
  return file;
}

function analysed(file: string, scope?: Scope): Analysis {
  const db = openRecording(file, { readonly: true });
  try {
    return analyze(db, { scope });
  } finally {
    db.close();
  }
}

function count(file: string, sql: string): number {
  const db = openRecording(file, { readonly: true });
  try {
    return (db.prepare(sql).pluck().get() as number) ?? 0;
  } finally {
    db.close();
  }
}

const NCCL_KERNELS = "SELECT count(*) FROM kernels k JOIN strings s ON s.id = k.name_id WHERE s.value LIKE '%nccl%'";
const ms = (ns: number) => (ns / 1e6).toFixed(2);

describe('NCCL on two GPUs', { skip, concurrency: false }, () => {
  const files: Record<string, string> = {};

  it('serial vs overlap: the serialized all-reduces are found on both ranks, the overlapped ones not; the what-if is within 15% of the overlapped run', async () => {
    files.serial = await recordJob('nccl-serial', [...torchrun, '--nproc-per-node', '2', program, '--mode', 'serial', ...ARGS]);
    files.overlap = await recordJob('nccl-overlap', [...torchrun, '--nproc-per-node', '2', program, '--mode', 'overlap', ...ARGS]);
    const serial = analysed(files.serial, STEPS_SCOPE);
    const overlap = analysed(files.overlap, STEPS_SCOPE);
    for (const a of [serial, overlap]) {
      assert.deepEqual(
        a.communication.ranks.filter((r) => r.rank !== null).map((r) => [r.rank, r.worldSize]),
        [
          [0, 2],
          [1, 2],
        ],
      );
      assert.ok(a.communication.collectives.some((c) => c.collective === 'all-reduce'));
    }
    const found = serial.diagnosis.findings.filter((f) => f.kind === 'serialized-collective');
    assert.deepEqual(found.map((f) => serial.diagnosis.context.processes.get(f.pid!)?.rank).sort(), [0, 1]);
    assert.deepEqual(
      overlap.diagnosis.findings.filter((f) => f.kind === 'serialized-collective').map((f) => f.title),
      [],
    );
    // Overlap per rank: the overlapped run hides more of its communication.
    for (const rank of [0, 1]) {
      const o = (a: Analysis) => a.communication.ranks.find((r) => r.rank === rank)!.total.overlap ?? 0;
      assert.ok(o(overlap) > o(serial) + 0.2, `rank ${rank}: overlap ${o(serial)} → ${o(overlap)}`);
    }
    const w = found[0]!.whatIf!;
    const measured = overlap.diagnosis.context.gpuSpan.end - overlap.diagnosis.context.gpuSpan.start;
    const error = w.predictedNs / measured - 1;
    table.push(`serial=${ms(w.measuredNs)}ms predicted=${ms(w.predictedNs)}ms overlapped=${ms(measured)}ms error=${(error * 100).toFixed(1)}%`);
    assert.ok(w.measuredNs > measured, 'the serial run is the slower');
    assert.ok(Math.abs(error) < 0.15, `what-if ${ms(w.predictedNs)} ms vs overlapped ${ms(measured)} ms`);
  });

  it('straggler: rank 1, sleeping before each step, is named with the time rank 0 waited for it', async () => {
    const file = await recordJob('nccl-straggler', [
      ...torchrun,
      '--nproc-per-node',
      '2',
      program,
      '--mode',
      'serial',
      ...ARGS,
      '--delay-rank',
      '1',
      '--delay-ms',
      String(DELAY_MS),
    ]);
    const a = analysed(file);
    const s = a.stragglers.straggler;
    table.push(`straggler rank=${s?.rank} last=${s?.lastCount}/${s?.instances} waited=${s ? ms(s.causedWaitNs) : '-'}ms (slept ${STEPS * DELAY_MS} ms)`);
    assert.equal(s?.rank, 1);
    // Rank 0 waits in each step's first all-reduce for the sleep (less what it computed meanwhile).
    assert.ok(s.causedWaitNs > 0.5 * (STEPS - 1) * DELAY_MS * 1e6 && s.causedWaitNs < 1.5 * STEPS * DELAY_MS * 1e6, `waited ${ms(s.causedWaitNs)} ms`);
    const f = a.diagnosis.findings.find((x) => x.kind === 'straggler-rank');
    assert.match(f?.title ?? '', /^Rank 1 /);
  });

  it('two nodes, one recorder each, merged: the counts of the run recorded by one recorder, clocks aligned by the collectives', async () => {
    const node = (n: number) =>
      recordJob(
        `nccl-node${n}`,
        [
          ...torchrun,
          '--nnodes',
          '2',
          '--node-rank',
          String(n),
          '--nproc-per-node',
          '1',
          '--master-addr',
          '127.0.0.1',
          '--master-port',
          '29533',
          program,
          '--mode',
          'serial',
          ...ARGS,
        ],
        { CUDA_VISIBLE_DEVICES: String(n) },
      );
    const [n0, n1] = await Promise.all([node(0), node(1)]);
    const merged = path.join(workDir, 'nccl-two-nodes.sqlite');
    const m = mergeRecordings([n0, n1], merged, { overwrite: true });
    table.push(
      `merge: ${m.sources.map((s) => `${path.basename(s.file)} shift=${s.shiftNs}ns residual=${s.residualNs}ns collectives=${s.collectives}`).join('; ')}`,
    );
    for (const s of m.sources) assert.ok(Math.abs(s.correctionNs) < 1e6, `${s.file}: same host, the correction is small (${s.correctionNs} ns)`);
    for (const sql of [NCCL_KERNELS, 'SELECT count(*) FROM kernels', 'SELECT count(*) FROM processes WHERE rank IS NOT NULL'])
      assert.equal(count(merged, sql), count(files.serial!, sql), sql);
    const a = analysed(merged);
    assert.deepEqual(
      a.communication.ranks.filter((r) => r.rank !== null).map((r) => r.rank),
      [0, 1],
    );
  });

  it('peer copies between the GPUs count as communication', async () => {
    const script = path.join(workDir, 'peer.py');
    fs.writeFileSync(
      script,
      'import torch\na = torch.randn(1 << 24, device="cuda:0")\nfor _ in range(5):\n    b = a.to("cuda:1")\n    c = torch.empty_like(b)\n    c.copy_(a)\ntorch.cuda.synchronize()\nprint("nccl_overlap: ok rank=0 peer", torch.cuda.can_device_access_peer(0, 1))\n',
    );
    const file = await recordJob('peer-copies', ['python3', script]);
    const kinds = count(file, 'SELECT count(*) FROM memcpys WHERE src_device_id <> dst_device_id');
    const a = analysed(file);
    table.push(`peer copies: ${a.communication.peerCopies.count} (${kinds} with two devices) ${(a.communication.peerCopies.bytes / 2 ** 20).toFixed(0)} MiB`);
    assert.ok(a.communication.peerCopies.count >= 10, `peer copies ${a.communication.peerCopies.count}`);
  });
});

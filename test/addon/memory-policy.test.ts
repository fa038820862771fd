// The one-shot commands' heap policy (native/addon/src/memory_policy.cc,
// native/addon.ts keepFreedMemory): a block freed is reused by the next
// allocation, where by default each large block is a fresh map whose pages
// all fault again. Measured in a process of its own (the policy is the
// whole process's, for the rest of its life): the page faults of touching
// 256 MiB again after the first 256 MiB was freed; and of touching 256 MiB
// whose pages prefaultHeap mapped ahead (what the diagnosing thread does for
// the what-if thread's replay: whatif-thread.ts); and the shared columns a
// load writes, maps of their own backed by huge pages (mapOwnBlocks).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const addonModule = path.resolve(import.meta.dirname, '../../profiler/native/addon.ts');

function faultsOfSecondBlock(keep: boolean): { kept: boolean | null; faults: number } {
  const script = `
    const { keepFreedMemory } = await import(${JSON.stringify(addonModule)});
    const kept = ${keep} ? keepFreedMemory() : null;
    const touch = () => new Float64Array(32 << 20).fill(1).length; // 256 MiB
    touch();
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 50));
    globalThis.gc();
    const before = process.resourceUsage().minorPageFault;
    touch();
    console.log(JSON.stringify({ kept, faults: process.resourceUsage().minorPageFault - before }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })) as {
    kept: boolean | null;
    faults: number;
  };
}

function faultsAfterPrefault(keep: boolean): { mapped: number; faults: number } {
  const script = `
    const { keepFreedMemory, prefaultHeap } = await import(${JSON.stringify(addonModule)});
    if (${keep}) keepFreedMemory();
    const mapped = prefaultHeap(256 << 20);
    const before = process.resourceUsage().minorPageFault;
    new Float64Array(32 << 20).fill(1); // 256 MiB
    console.log(JSON.stringify({ mapped, faults: process.resourceUsage().minorPageFault - before }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { mapped: number; faults: number };
}

/** The kernel's transparent huge page mode (always, madvise or never); null where it has none. */
function hugePageMode(): string | null {
  try {
    return /\[(\w+)\]/.exec(fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** The huge pages (KiB) a load of a recording into shared columns with room for 2^20 rows took, and what mapOwnBlocks said. */
function hugePagesOfSharedLoad(keep: boolean): { own: [boolean, boolean]; hugeKiB: number; ops: number } {
  const recording = path.resolve(import.meta.dirname, '../fixtures/recordings/nccl-straggler-h200x2.sqlite');
  const script = `
    const fs = await import('node:fs');
    const { keepFreedMemory, loadSharedTimelineColumns, mapOwnBlocks } = await import(${JSON.stringify(addonModule)});
    if (${keep}) keepFreedMemory();
    const huge = () => Number(/AnonHugePages:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/smaps_rollup', 'utf8'))[1]);
    const before = huge();
    const c = loadSharedTimelineColumns(${JSON.stringify(recording)}, { ops: 1 << 20, calls: 1 << 20 });
    const hugeKiB = huge() - before;
    // On and off again: what the load did around its arrays.
    const own = [mapOwnBlocks(true), mapOwnBlocks(false)];
    console.log(JSON.stringify({ own, hugeKiB, ops: c.ops.length }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as {
    own: [boolean, boolean];
    hugeKiB: number;
    ops: number;
  };
}

describe('the heap of a one-shot command', () => {
  it.runIf(process.platform === 'linux')('reuses a freed block for the next one: its pages do not fault again (glibc)', () => {
    const plain = faultsOfSecondBlock(false);
    const kept = faultsOfSecondBlock(true);
    expect(kept.kept).toBe(true);
    // 256 MiB is 65,536 pages of 4 KiB: by default nearly every one faults again.
    expect(plain.faults).toBeGreaterThan(30_000);
    expect(kept.faults).toBeLessThan(plain.faults / 10);
  });

  it.runIf(process.platform === 'linux')('has the pages of a block mapped ahead of the thread that writes them (glibc, Linux 5.14)', () => {
    const plain = faultsAfterPrefault(false);
    const kept = faultsAfterPrefault(true);
    // Without the policy a block is a map of its own, unmapped when freed: nothing to map ahead.
    expect(plain.mapped).toBe(0);
    expect(plain.faults).toBeGreaterThan(30_000);
    expect(kept.mapped).toBeGreaterThan(250 << 20);
    expect(kept.faults).toBeLessThan(plain.faults / 10);
  });

  // Room for 2^20 rows: 8 MiB a column of doubles, whose first rows the load writes (the fixture's 1,946 operations
  // and 42,591 calls): each such column's first 2 MiB one huge page. Under the policy the heap would have served them
  // (no huge page: the heap is not advised, and calloc may clear it on this thread first).
  it.runIf(process.platform === 'linux' && ['always', 'madvise'].includes(hugePageMode() ?? 'never'))(
    'writes the shared columns into maps of their own, backed by huge pages, under the policy or without it (Linux THP)',
    () => {
      for (const keep of [true, false]) {
        const got = hugePagesOfSharedLoad(keep);
        expect(got.ops).toBe(1946);
        expect(got.own).toEqual([keep, keep]);
        expect(got.hugeKiB).toBeGreaterThanOrEqual(2048);
      }
    },
  );

  it('mapOwnBlocks takes a boolean', async () => {
    const { mapOwnBlocks } = await import('../../profiler/native/addon.ts');
    expect(() => (mapOwnBlocks as (on?: unknown) => boolean)()).toThrow(/mapOwnBlocks\(on: boolean\)/);
  });
});

// The one vocabulary of CUDA calls (profiler/analysis/call-families.ts):
// every form a call is stored under — per-thread-default-stream (_ptsz,
// _ptds) and driver ABI versions (_v2) — lands in the family of the plain
// call, so no rule misses `cudaStreamSynchronize_ptsz` or
// `cuMemHostRegister_v2`.
import { describe, expect, it } from 'vitest';
import { baseCallName, blocksOnDevice, callFamily, familiesByNameId, syncScope } from '../../profiler/cuda/call-families.ts';

describe('call families', () => {
  it('strips per-thread-stream suffixes and driver ABI versions', () => {
    expect(baseCallName('cudaStreamSynchronize_ptsz')).toBe('cudaStreamSynchronize');
    expect(baseCallName('cudaMemcpyAsync_ptsz')).toBe('cudaMemcpyAsync');
    expect(baseCallName('cudaLaunchKernel_ptds')).toBe('cudaLaunchKernel');
    expect(baseCallName('cuMemHostRegister_v2')).toBe('cuMemHostRegister');
    expect(baseCallName('cuMemAlloc_v2')).toBe('cuMemAlloc');
  });

  it('classifies every form of a call as the plain call', () => {
    const cases: [string, string][] = [
      ['cudaDeviceSynchronize', 'sync'],
      ['cudaStreamSynchronize_ptsz', 'sync'],
      ['cuStreamSynchronize', 'sync'],
      ['cuCtxSynchronize', 'sync'],
      ['cudaEventSynchronize', 'sync'],
      ['cudaMalloc', 'alloc'],
      ['cudaFree', 'alloc'],
      ['cuMemAlloc_v2', 'alloc'],
      ['cuMemFree_v2', 'alloc'],
      ['cudaMallocHost', 'pinned-alloc'],
      ['cudaHostAlloc', 'pinned-alloc'],
      ['cudaFreeHost', 'pinned-alloc'],
      ['cuMemHostAlloc', 'pinned-alloc'],
      ['cuMemAllocHost_v2', 'pinned-alloc'],
      ['cudaHostRegister', 'register'],
      ['cudaHostUnregister', 'register'],
      ['cuMemHostRegister_v2', 'register'],
      ['cuMemHostUnregister', 'register'],
      ['cuLibraryLoadData', 'module-load'],
      ['cuModuleLoadDataEx', 'module-load'],
      ['cuLinkComplete', 'module-load'],
      ['cuInit', 'context'],
      ['cuDevicePrimaryCtxRetain', 'context'],
      // Stream-ordered allocation does not block the host: not 'alloc'.
      ['cudaMallocAsync', 'other'],
      ['cudaFreeAsync_ptsz', 'other'],
      ['cudaLaunchKernel_ptsz', 'other'],
      ['cudaMemcpyAsync', 'other'],
    ];
    for (const [name, family] of cases) expect(callFamily(name), name).toBe(family);
    expect(syncScope('cudaStreamSynchronize_ptsz')).toBe('stream');
    expect(syncScope('cuCtxSynchronize')).toBe('device');
    expect(syncScope('cudaFree')).toBeNull();
  });

  it('the blocking families are those the host-blocking rule and the replay treat as waits', () => {
    expect(['sync', 'alloc', 'pinned-alloc', 'register'].every((f) => blocksOnDevice(f as never))).toBe(true);
    expect(['module-load', 'function-lookup', 'context', 'other'].some((f) => blocksOnDevice(f as never))).toBe(false);
  });

  it('a table by name id gives the same answers', () => {
    const names = new Map([
      [3, 'cuMemHostRegister_v2'],
      [7, 'cudaStreamSynchronize_ptsz'],
      [9, 'cudaLaunchKernel'],
    ]);
    const t = familiesByNameId(names);
    expect([3, 7, 9, 1, -1, 100].map((id) => t.family(id))).toEqual(['register', 'sync', 'other', 'other', 'other', 'other']);
  });
});

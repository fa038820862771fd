// The one vocabulary of CUDA API calls the analysis reasons about: which
// calls wait for the GPU, which allocate or pin memory (and so synchronize
// the device implicitly), which load modules or create contexts (start-up).
// Every rule, the what-if replay and the start-up detection ask here, by
// call name as stored (runtime names without CUPTI's version suffix, driver
// names as exported: cuMemAlloc_v2, cudaStreamSynchronize_ptsz).
//
// A name is reduced to its base first: the per-thread-default-stream forms
// (_ptsz, _ptds) and driver ABI versions (_v2, _v3) are the same call.
import type { CallFamily } from '../contract/findings.ts';
import { IdTable } from '../base/id-table.ts';

/** Which work a synchronize call waits for. */
export type SyncScope = 'device' | 'stream' | 'event';

/** The call without its per-thread-stream suffix and driver ABI version: cuMemHostRegister_v2 → cuMemHostRegister. */
export function baseCallName(name: string): string {
  return name.replace(/_ptsz$|_ptds$/, '').replace(/_v\d+$/, '');
}

const SYNC_SCOPE: Record<string, SyncScope> = {
  cudaDeviceSynchronize: 'device',
  cudaThreadSynchronize: 'device',
  cuCtxSynchronize: 'device',
  cudaStreamSynchronize: 'stream',
  cuStreamSynchronize: 'stream',
  cudaEventSynchronize: 'event',
  cuEventSynchronize: 'event',
};

const FAMILY: Record<string, CallFamily> = {};
function add(family: CallFamily, names: string[]): void {
  for (const n of names) FAMILY[n] = family;
}
add('sync', Object.keys(SYNC_SCOPE));
add('alloc', [
  'cudaMalloc',
  'cudaFree',
  'cudaMallocPitch',
  'cudaMalloc3D',
  'cudaMallocManaged',
  'cudaMallocArray',
  'cudaFreeArray',
  'cuMemAlloc',
  'cuMemFree',
  'cuMemAllocPitch',
  'cuMemAllocManaged',
  'cuArrayCreate',
  'cuArrayDestroy',
]);
add('pinned-alloc', ['cudaMallocHost', 'cudaHostAlloc', 'cudaFreeHost', 'cuMemAllocHost', 'cuMemHostAlloc', 'cuMemFreeHost']);
add('register', ['cudaHostRegister', 'cudaHostUnregister', 'cuMemHostRegister', 'cuMemHostUnregister']);
add('function-lookup', [
  'cudaFuncGetAttributes',
  'cuFuncGetAttribute',
  'cuModuleGetFunction',
  'cuLibraryGetKernel',
  'cuKernelGetFunction',
  'cuLibraryGetModule',
  'cudaGetFuncBySymbol',
  'cuKernelGetAttribute',
]);
add('context', [
  'cuInit',
  'cuDevicePrimaryCtxRetain',
  'cuDevicePrimaryCtxRelease',
  'cuDevicePrimaryCtxReset',
  'cuCtxCreate',
  'cuCtxDestroy',
  'cudaInitDevice',
  'cudaDeviceReset',
]);

const MODULE_LOAD = /^(cuModuleLoad\w*|cuLibraryLoad\w*|cudaLibraryLoad\w*|cuLink(Create|AddData|AddFile|Complete))$/;

/** The family of a call, by its stored name. */
export function callFamily(name: string): CallFamily {
  const base = baseCallName(name);
  return FAMILY[base] ?? (MODULE_LOAD.test(base) ? 'module-load' : 'other');
}

/** For a synchronize call, what it waits for; null for any other call. */
export function syncScope(name: string): SyncScope | null {
  return SYNC_SCOPE[baseCallName(name)] ?? null;
}

/**
 * cudaProfilerStart / cuProfilerStart and their Stop calls: how a program
 * marks the part of its run it wants profiled (nsys --capture-range
 * cudaProfilerApi, `record --capture-range cuda-profiler-api`). Not a family:
 * the analysis treats them as the cheap calls they are.
 */
export function profilerControl(name: string): 'start' | 'stop' | null {
  const base = baseCallName(name);
  if (base === 'cudaProfilerStart' || base === 'cuProfilerStart') return 'start';
  if (base === 'cudaProfilerStop' || base === 'cuProfilerStop') return 'stop';
  return null;
}

/**
 * cudaGraphLaunch / cuGraphLaunch: one call that runs every node of an
 * instantiated CUDA graph, each kernel, copy and memset an operation of its
 * own with the call's correlation id (analysis/graphs.ts). Not a family:
 * the host pays for it as for any launch.
 */
export function isGraphLaunch(name: string): boolean {
  const base = baseCallName(name);
  return base === 'cudaGraphLaunch' || base === 'cuGraphLaunch';
}

/** The families whose calls block the host until the device has finished its work. */
export type BlockingFamily = 'sync' | 'alloc' | 'pinned-alloc' | 'register';

/** Families whose calls make the device finish its work before they return (explicitly or not). */
export function blocksOnDevice(family: CallFamily): family is BlockingFamily {
  return family === 'sync' || family === 'alloc' || family === 'pinned-alloc' || family === 'register';
}

/**
 * A table from name id to family, for loops over millions of calls (a Map
 * or a regular expression per call costs tenths of a second at 10 M calls).
 * Index by `nameId`; ids with no name read as 'other'.
 */
export function familiesByNameId(names: Map<number, string>): { family: (nameId: number) => CallFamily } {
  const order: CallFamily[] = ['other', 'sync', 'alloc', 'pinned-alloc', 'register', 'module-load', 'function-lookup', 'context'];
  const table = IdTable.of(names.keys(), 0);
  for (const [id, name] of names) table.set(id, order.indexOf(callFamily(name)));
  return { family: (nameId) => order[table.get(nameId)]! };
}

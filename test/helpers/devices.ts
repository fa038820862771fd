// The device of the tests that build traces by hand: an H100's limits as
// the collector records them (132 SMs, 3 copy engines, 2048 threads and 32
// blocks per SM), so that the replay's resource model sees a real GPU.
import type { DeviceRow } from '../../profiler/analysis/trace.ts';

export const H100: DeviceRow = {
  id: 1,
  uuid: null,
  ordinal: 0,
  name: 'H100',
  ccMajor: 9,
  ccMinor: 0,
  smCount: 132,
  asyncEngineCount: 3,
  concurrentKernels: 1,
  totalMemoryBytes: null,
  maxThreadsPerSm: 2048,
  maxSharedMemoryPerSm: 233472,
  maxRegistersPerSm: 65536,
  maxBlocksPerSm: 32,
  pcieGeneration: 5,
  pcieWidth: 16,
};

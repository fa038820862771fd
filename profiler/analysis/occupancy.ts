// How many blocks of a kernel fit on one SM at once, from the devices
// table's per-SM limits (threads, registers, shared memory, blocks), as the
// occupancy calculator counts them without allocation granularity (registers
// are allocated per warp in units of 256: ignored, an approximation). Used
// by the device-full rule (does a grid fill the device?) and by the replay
// (what share of the SMs a kernel holds).
import type { DeviceRow } from './trace.ts';

/** Resident blocks per SM for a kernel shape; at least 1. */
export function blocksPerSm(dev: DeviceRow, threads: number, registers: number, shared: number): number {
  let b = dev.maxBlocksPerSm ?? 32;
  if (dev.maxThreadsPerSm && threads > 0) b = Math.min(b, Math.floor(dev.maxThreadsPerSm / threads));
  if (dev.maxRegistersPerSm && registers > 0 && threads > 0) b = Math.min(b, Math.floor(dev.maxRegistersPerSm / (registers * threads)));
  if (dev.maxSharedMemoryPerSm && shared > 0) b = Math.min(b, Math.floor(dev.maxSharedMemoryPerSm / shared));
  return Math.max(1, b);
}

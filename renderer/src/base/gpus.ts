// How the UI names a GPU: by its CUDA ordinal ("GPU 0"), what nvidia-smi,
// CUDA_VISIBLE_DEVICES and the user's own program call it, as the CLI's
// reports do (profiler/report/report.ts). The recording-wide device id is a
// key of the store, never shown; where a recording lacks the ordinal
// (some imported traces), the id stands in for it, as in the CLI.
import type { DeviceInfo } from '../../../profiler/contract/api.ts';

export function gpuNumber(d: DeviceInfo): number {
  return d.ordinal ?? d.id;
}

/** "GPU 0" for a device id of the recording ("—" for none). */
export function gpuName(devices: readonly DeviceInfo[], deviceId: number | null): string {
  if (deviceId === null) return '—';
  const d = devices.find((x) => x.id === deviceId);
  return `GPU ${d ? gpuNumber(d) : deviceId}`;
}

/** "GPU 0 · NVIDIA H100 80GB HBM3": group titles and headings. */
export function deviceTitle(d: DeviceInfo): string {
  return `GPU ${gpuNumber(d)}${d.name ? ` · ${d.name}` : ''}`;
}

// How the UI names a GPU: by its CUDA ordinal ("GPU 0"), what nvidia-smi,
// CUDA_VISIBLE_DEVICES and the user's own program call it, as the CLI's
// reports do (profiler/report/report.ts). The recording-wide device id is a
// key of the store, never shown; where a recording lacks the ordinal
// (some imported traces), the id stands in for it, as in the CLI.
// In a recording of several ranks or hosts every rank's first GPU is
// "GPU 0": there a GPU is named with its rank (and host), "rank 1 (node-b,
// GPU 0)", as the report and the findings name it (contract/ranks.ts
// gpuNames, the one way).
import type { DeviceInfo, RecordingSummary } from '../../../profiler/contract/api.ts';
import { gpuNames, type GpuNames } from '../../../profiler/contract/ranks.ts';

export function gpuNumber(d: DeviceInfo): number {
  return d.ordinal ?? d.id;
}

/** "GPU 0" for a device id of the recording ("—" for none). */
export function gpuName(devices: readonly DeviceInfo[], deviceId: number | null): string {
  if (deviceId === null) return '—';
  const d = devices.find((x) => x.id === deviceId);
  return `GPU ${d ? gpuNumber(d) : deviceId}`;
}

/** "GPU 0 · NVIDIA H100 80GB HBM3": group titles and headings; with `names`, the GPU as the recording names it ("rank 1 (node-b, GPU 0) · NVIDIA H200"). */
export function deviceTitle(d: DeviceInfo, names?: GpuNames): string {
  return `${names ? names.device(d.id) : `GPU ${gpuNumber(d)}`}${d.name ? ` · ${d.name}` : ''}`;
}

/** How the recording `s` names its GPUs: "GPU 0", or with their ranks where it holds several ranks or hosts. */
export function recordingGpuNames(s: Pick<RecordingSummary, 'devices' | 'processes' | 'streams'>): GpuNames {
  return gpuNames(s.devices, s.processes, s.streams);
}

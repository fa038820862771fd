// The rows: the recording's groups (rows.ts), laid out with what is folded
// and hidden and each NVTX row as deep as the windows loaded so far nest
// it; and from the layout, what the loader must fetch.
import { useCallback, useMemo, useState } from 'react';
import type { RecordingSummary } from '../../../profiler/contract/api.ts';
import type { IterationTrack } from './iterations.ts';
import { buildGroups, layout as layOut, windowed, type Layout, type TrackGroup } from './rows.ts';
import type { Loaded } from './window-loader.ts';

export interface RowLayout {
  groups: TrackGroup[];
  lay: Layout;
  /** The rows whose items are fetched (shown, and windowed). */
  fetchRows: string[];
  /** Devices whose concurrency track shows, with all their stream rows (hidden ones too). */
  devices: Map<number, string[]>;
  /** Devices of the busy rows shown (folded ranks) in view or a viewport from it, as one stable list. */
  busyDevices: number[];
  /** A window was loaded: an NVTX row it nests deeper than seen so far grows (stable). */
  noteNvtxDepth: (l: Loaded) => void;
}

export function useRowLayout(
  summary: RecordingSummary,
  iterations: IterationTrack | null,
  folded: Set<string>,
  hidden: Set<string>,
  viewport: { scrollTop: number; height: number },
): RowLayout {
  const groups = useMemo(() => buildGroups(summary, iterations), [summary, iterations]);
  const [nvtxDepth, setNvtxDepth] = useState<Map<string, number>>(new Map());
  const lay = useMemo(() => layOut(groups, folded, hidden, nvtxDepth), [groups, folded, hidden, nvtxDepth]);
  const fetchRows = useMemo(() => lay.rows.filter((r) => r.type === 'row' && windowed(r.row!.kind)).map((r) => r.id), [lay]);
  const devices = useMemo(() => {
    const m = new Map<number, string[]>();
    for (const r of lay.rows) if (r.row?.kind === 'conc') m.set(r.row.deviceId!, []);
    for (const g of groups)
      for (const r of g.rows) if (r.kind === 'stream' && r.stream?.deviceId != null && m.has(r.stream.deviceId)) m.get(r.stream.deviceId)!.push(r.id);
    return m;
  }, [lay, groups]);
  // The busy rows within a viewport of the one shown, counted in whole viewports so that a small scroll asks
  // nothing: a job of 1,024 folded ranks asked for every rank's GPU busy (32 MB of JSON at 2,000 buckets).
  const page = Math.max(1, viewport.height);
  const first = (Math.floor(viewport.scrollTop / page) - 1) * page;
  const last = first + 3 * page;
  const busyKey = lay.rows
    .filter((r) => r.row?.kind === 'busy' && r.y + r.h >= first && r.y <= last)
    .flatMap((r) => r.row?.deviceIds ?? [])
    .sort((a, b) => a - b)
    .join(',');
  const busyDevices = useMemo(() => (busyKey ? [...new Set(busyKey.split(',').map(Number))] : []), [busyKey]);
  const noteNvtxDepth = useCallback((l: Loaded) => {
    setNvtxDepth((prev) => {
      let changed = false;
      const next = new Map(prev);
      for (const [row, d] of l.nvtxDepth)
        if ((prev.get(row) ?? -1) < d) {
          next.set(row, d);
          changed = true;
        }
      return changed ? next : prev;
    });
  }, []);
  return { groups, lay, fetchRows, devices, busyDevices, noteNvtxDepth };
}

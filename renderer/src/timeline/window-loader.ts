// Fetching for the timeline, separate from drawing (draw.ts only reads what
// is loaded). The loader asks for the visible window padded by one viewport
// on each side, at a resolution rounded down to a power of two of the
// nanoseconds per device pixel, and asks again only when the view leaves the
// loaded window, the resolution bucket changes, or the rows change. The
// query side merges items shorter than the resolution into coverage spans,
// so an answer holds a few rectangles per pixel column at most, whatever the
// recording's size.
import type { ConcurrencyResponse, ItemKind, ItemTable, StreamScopeApi } from '../../../profiler/contract/api.ts';
import { windowColumnsOf, type RowColumns, type WindowColumns } from '../../../profiler/contract/window-codec.ts';
import type { TransportExtras } from '../api/client.ts';

export interface View {
  start: number;
  end: number;
}

export interface Loaded {
  seq: number;
  startNs: number;
  endNs: number;
  resolutionNs: number;
  rowsKey: string;
  /** Each row's items and coverage as columns (window-codec.ts): nothing per item on this thread. */
  byRow: Map<string, RowColumns>;
  /** What the rows' table and kind indexes stand for. */
  tables: ItemTable[];
  kinds: ItemKind[];
  strings: Record<number, string>;
  /** Per device: kernels and copies per direction in flight, bucketed over [startNs, endNs). */
  concurrency: Map<number, ConcurrencyResponse>;
  /** Deepest NVTX nesting seen per row. */
  nvtxDepth: Map<string, number>;
  /** Items and coverage spans held (for the status line). */
  itemCount: number;
  coverageCount: number;
}

/** ns per device pixel, rounded down to a power of two (at least 1 ns). */
export function resolutionBucket(view: View, widthCssPx: number, dpr: number): number {
  const perPx = (view.end - view.start) / Math.max(1, widthCssPx * dpr);
  return 2 ** Math.max(0, Math.floor(Math.log2(Math.max(1, perPx))));
}

export class WindowLoader {
  loaded: Loaded | null = null;
  /** Requests sent and not answered. */
  inFlight = 0;
  private seq = 0;
  private wanted: { startNs: number; endNs: number; resolutionNs: number; rowsKey: string } | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private disposed = false;

  constructor(
    private readonly api: StreamScopeApi & TransportExtras,
    private readonly recordingId: string,
    private readonly onLoaded: (loaded: Loaded) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** True when nothing is pending: what is drawn is what will stay drawn. */
  idle(): boolean {
    return this.inFlight === 0 && this.timer === null;
  }

  /**
   * Called on every view change; cheap when the loaded window still serves.
   * `devices`: per device with a concurrency track, its stream rows (fetched
   * even when hidden: the track counts every stream of the device).
   */
  update(view: View, widthCssPx: number, dpr: number, rows: string[], devices: Map<number, string[]>): void {
    const resolutionNs = resolutionBucket(view, widthCssPx, dpr);
    const rowsKey = `${rows.join(',')}|${[...devices.keys()].join(',')}`;
    const serves = (w: { startNs: number; endNs: number; resolutionNs: number; rowsKey: string } | null) =>
      w !== null && w.resolutionNs === resolutionNs && w.rowsKey === rowsKey && w.startNs <= view.start && w.endNs >= view.end;
    if (serves(this.loaded) || serves(this.wanted)) return;
    const span = view.end - view.start;
    const want = { startNs: Math.floor(view.start - span), endNs: Math.ceil(view.end + span), resolutionNs, rowsKey };
    this.wanted = want;
    if (this.timer) clearTimeout(this.timer);
    // The first window goes at once; while zooming or panning, at most one
    // request per 30 ms (the trailing one always goes).
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.fetch(want, rows, devices, widthCssPx * dpr * 3);
      },
      this.loaded ? 30 : 0,
    );
  }

  private async fetch(
    want: { startNs: number; endNs: number; resolutionNs: number; rowsKey: string },
    rows: string[],
    devices: Map<number, string[]>,
    devicePx: number,
  ): Promise<void> {
    const seq = ++this.seq;
    this.inFlight++;
    try {
      const buckets = Math.max(16, Math.min(4096, Math.round(devicePx / 2)));
      // The concurrency tracks come with the same answer, computed by the
      // query side from the rows it builds (the device's hidden streams
      // too, without sending them): no second pass over the recording, and
      // none on this thread.
      const concurrency = [...devices].map(([deviceId, streamRows]) => ({ deviceId, rows: streamRows, buckets }));
      const request = { rows, startNs: want.startNs, endNs: want.endNs, resolutionNs: want.resolutionNs, concurrency };
      // Columns straight from the binary answer in browser mode; from the
      // objects where the transport gives objects (the desktop app's IPC).
      const res: WindowColumns =
        !rows.length && !concurrency.length
          ? { startNs: want.startNs, endNs: want.endNs, rows: [], strings: {}, tables: [], kinds: [] }
          : this.api.windowColumns
            ? await this.api.windowColumns(this.recordingId, request)
            : windowColumnsOf(await this.api.window(this.recordingId, request));
      const byId = new Map(res.rows.map((r) => [r.rowId, r]));
      const conc: ConcurrencyResponse[] = res.concurrency ?? [];
      // An answer older than the one drawn is dropped; a newer one is taken
      // even if an even newer request is on its way (no starving while panning).
      if (this.disposed || (this.loaded && this.loaded.seq > seq)) return;
      const nvtxDepth = new Map<string, number>();
      let itemCount = 0;
      let coverageCount = 0;
      for (const row of res.rows) {
        itemCount += row.items.length;
        coverageCount += row.coverage.length;
        if (!row.rowId.startsWith('nvtx:')) continue;
        let d = 0;
        for (let k = 0; k < row.items.length; k++) d = Math.max(d, row.items.depth[k]!);
        for (let k = 0; k < row.coverage.length; k++) d = Math.max(d, row.coverage.depth[k]!);
        nvtxDepth.set(row.rowId, d);
      }
      this.loaded = {
        seq,
        startNs: want.startNs,
        endNs: want.endNs,
        resolutionNs: want.resolutionNs,
        rowsKey: want.rowsKey,
        byRow: byId,
        tables: res.tables,
        kinds: res.kinds,
        strings: res.strings,
        concurrency: new Map(conc.map((c) => [c.deviceId, c])),
        nvtxDepth,
        itemCount,
        coverageCount,
      };
      if (this.wanted === want) this.wanted = null;
      this.onLoaded(this.loaded);
    } catch (err) {
      if (this.wanted === want) this.wanted = null;
      if (!this.disposed) this.onError(err);
    } finally {
      this.inFlight--;
    }
  }
}

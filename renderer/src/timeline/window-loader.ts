// Fetching for the timeline, separate from drawing (draw.ts only reads what
// is loaded). The loader asks for the visible window padded by one viewport
// on each side, at a resolution rounded down to a power of two of the
// nanoseconds per device pixel, and asks again only when the view leaves the
// loaded window, the resolution bucket changes, or the rows change. The
// query side merges items shorter than the resolution into coverage spans,
// so an answer holds a few rectangles per pixel column at most, whatever the
// recording's size. One window is asked at a time: while it is computed, a
// newer view replaces the one waiting to go, and only the latest goes when
// the answer lands (a zoomed-in window of a large recording costs the server
// a few hundred milliseconds; asking for one every 30 ms while panning kept a
// core of a 2-core machine busy with windows no one would see, and the frames
// of the page waited for it). Folded ranks' busy rows come with it, from the zones
// (overview() over the same window), asked in parallel. A recording being
// written grows under the loaded window: refresh() makes the next update
// ask again, while what is loaded stays drawn until the answer lands.
import type { ConcurrencyResponse, ItemKind, ItemTable, OverviewResponse } from '../../../profiler/contract/api.ts';
import { toNs, type BrandedNs } from '../../../profiler/contract/time.ts';
import { windowColumnsOf, type RowColumns, type WindowColumns } from '../../../profiler/contract/window-codec.ts';
import type { PageApi, TransportExtras } from '../api/client.ts';
import { nsPerPhysicalPx } from './coords.ts';
import type { View } from './view.ts';

export interface Loaded {
  seq: number;
  /** The loader's generation it was asked in (refresh() starts a new one). */
  generation: number;
  /** The window asked for, as it was asked. */
  startNs: BrandedNs;
  endNs: BrandedNs;
  resolutionNs: BrandedNs;
  rowsKey: string;
  /** Each row's items and coverage as columns (window-codec.ts): nothing per item on this thread. */
  byRow: Map<string, RowColumns>;
  /** What the rows' table and kind indexes stand for. */
  tables: ItemTable[];
  kinds: ItemKind[];
  strings: Record<number, string>;
  /** The kernels' names as drawn (WindowResponse.kernelLabels: told apart over the whole recording). */
  kernelLabels: Record<number, string>;
  /** Per device: kernels and copies per direction in flight, bucketed over [startNs, endNs). */
  concurrency: Map<number, ConcurrencyResponse>;
  /** Deepest NVTX nesting seen per row. */
  nvtxDepth: Map<string, number>;
  /**
   * Folded ranks' GPU busy: per device, the average kernels, copies and
   * other operations in flight per bucket over [startNs, endNs), from the
   * zones (api.overview over the window); null when no busy row is shown.
   */
  busy: Busy | null;
  /** Items and coverage spans held (for the status line). */
  itemCount: number;
  coverageCount: number;
}

export interface Busy {
  startNs: number;
  bucketNs: number;
  /** The devices asked for: the busy rows near the view (use-row-layout.ts); the others' rows are not loaded. */
  asked: Set<number>;
  devices: Map<number, { kernels: number[]; copies: number[]; other: number[] }>;
  /** The most operations in flight in any bucket of any device (at least 1): every busy row is drawn to this one scale, so ranks compare. */
  peak: number;
}

/** ns per device pixel, rounded down to a power of two (at least 1 ns). */
export function resolutionBucket(view: View, widthCssPx: number, dpr: number): BrandedNs {
  const perPx = nsPerPhysicalPx(view, widthCssPx, dpr);
  return toNs(2 ** Math.max(0, Math.floor(Math.log2(Math.max(1, perPx)))));
}

/** A window the loader asks for (the view padded, whole ns) and what it was asked for. */
interface Wanted {
  startNs: BrandedNs;
  endNs: BrandedNs;
  resolutionNs: BrandedNs;
  rowsKey: string;
  generation: number;
}

export class WindowLoader {
  loaded: Loaded | null = null;
  /** Requests sent and not answered. */
  inFlight = 0;
  private seq = 0;
  private generation = 0;
  private wanted: Wanted | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The request waiting for the one in flight to land (only the latest is kept). */
  private next: Parameters<WindowLoader['fetch']> | null = null;
  private disposed = false;

  constructor(
    private readonly api: PageApi & TransportExtras,
    private readonly recordingId: string,
    private readonly onLoaded: (loaded: Loaded) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** The recording grew: the next update() asks for the view again, even where what is loaded covers it. */
  refresh(): void {
    this.generation++;
  }

  /** True when nothing is pending: what is drawn is what will stay drawn. */
  idle(): boolean {
    return this.inFlight === 0 && this.timer === null && this.next === null;
  }

  /**
   * Called on every view change; cheap when the loaded window still serves.
   * `devices`: per device with a concurrency track, its stream rows (fetched
   * even when hidden: the track counts every stream of the device).
   * `busyDevices`: the devices of the busy rows shown (folded ranks).
   */
  update(view: View, widthCssPx: number, dpr: number, rows: string[], devices: Map<number, string[]>, busyDevices: number[] = []): void {
    const resolutionNs = resolutionBucket(view, widthCssPx, dpr);
    const rowsKey = `${rows.join(',')}|${[...devices.keys()].join(',')}|${busyDevices.join(',')}`;
    const serves = (w: Wanted | null) =>
      w !== null &&
      w.generation === this.generation &&
      w.resolutionNs === resolutionNs &&
      w.rowsKey === rowsKey &&
      w.startNs <= view.start &&
      w.endNs >= view.end;
    if (serves(this.loaded) || serves(this.wanted)) return;
    const span = view.end - view.start;
    const want: Wanted = {
      startNs: toNs(Math.floor(view.start - span)),
      endNs: toNs(Math.ceil(view.end + span)),
      resolutionNs,
      rowsKey,
      generation: this.generation,
    };
    this.wanted = want;
    if (this.timer) clearTimeout(this.timer);
    // The first window goes at once; while zooming or panning, at most one
    // request per 30 ms (the trailing one always goes).
    this.timer = setTimeout(
      () => {
        this.timer = null;
        const args: Parameters<WindowLoader['fetch']> = [want, rows, devices, busyDevices, widthCssPx * dpr * 3];
        if (this.inFlight > 0) this.next = args;
        else void this.fetch(...args);
      },
      this.loaded ? 30 : 0,
    );
  }

  private async fetch(want: Wanted, rows: string[], devices: Map<number, string[]>, busyDevices: number[], devicePx: number): Promise<void> {
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
      // Folded ranks' busy rows: from the zones, so a job of many ranks
      // costs a few thousand zone rows here, not a window over every stream.
      const none: WindowColumns = { startNs: want.startNs, endNs: want.endNs, rows: [], strings: {}, kernelLabels: {}, tables: [], kinds: [] };
      const [res, overview] = await Promise.all([
        !rows.length && !concurrency.length
          ? none
          : this.api.windowColumns
            ? this.api.windowColumns(this.recordingId, request)
            : this.api.window(this.recordingId, request).then(windowColumnsOf),
        busyDevices.length ? this.api.overview(this.recordingId, buckets, { startNs: want.startNs, endNs: want.endNs }, { ids: busyDevices }) : null,
      ]);
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
        generation: want.generation,
        startNs: want.startNs,
        endNs: want.endNs,
        resolutionNs: want.resolutionNs,
        rowsKey: want.rowsKey,
        byRow: byId,
        tables: res.tables,
        kinds: res.kinds,
        strings: res.strings,
        kernelLabels: res.kernelLabels,
        concurrency: new Map(conc.map((c) => [c.deviceId, c])),
        nvtxDepth,
        busy: overview && busyOf(overview, busyDevices),
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
      const next = this.next;
      this.next = null;
      // The latest view asked for while this one was computed; not when an answer since covers it.
      if (next && !this.disposed && this.wanted === next[0]) void this.fetch(...next);
    }
  }
}

/** The busy rows' data from an overview answer: the devices asked for, and the common scale. */
function busyOf(o: OverviewResponse, deviceIds: number[]): Busy {
  const wanted = new Set(deviceIds);
  const devices = new Map(o.devices.filter((d) => wanted.has(d.deviceId)).map((d) => [d.deviceId, d]));
  let peak = 1;
  for (const d of devices.values()) for (let b = 0; b < d.kernels.length; b++) peak = Math.max(peak, d.kernels[b]! + d.copies[b]! + d.other[b]!);
  return { startNs: o.startNs, bucketNs: o.bucketNs, asked: wanted, devices, peak };
}

// Loading: one WindowLoader per recording (window-loader.ts says what it
// asks for and when), told of every change of the view, the canvas's width
// and the rows shown; what it has loaded, for the frame to draw. A live
// recording's new revision makes it ask for the view again.
import { useEffect, useRef, useState, type RefObject } from 'react';
import { getApi } from '../api/client.ts';
import type { View } from './view.ts';
import { WindowLoader, type Loaded } from './window-loader.ts';

/** What the timeline's parent hears of the loading (read when it happens: they may change every render). */
export interface LoadingEvents {
  /** The first window of the recording is loaded. */
  onFirstData?: () => void;
  onError: (err: unknown) => void;
  /** What the loaded window holds, whenever it changes (the status line). */
  onStatus?: (s: { items: number; coverage: number; resolutionNs: number; loading: boolean }) => void;
}

export interface WindowWanted {
  view: View;
  /** The canvas's width (CSS pixels) and the device pixel ratio: the resolution. */
  width: number;
  dpr: number;
  /** The rows to fetch; per device with a concurrency track, its stream rows; the devices of the busy rows shown. */
  rows: string[];
  devices: Map<number, string[]>;
  busyDevices: number[];
  /** A live recording's revision (undefined: not live). */
  revision: number | undefined;
}

export function useWindowLoading(
  recordingId: string,
  wanted: WindowWanted,
  /** Each window loaded, before it is drawn (the rows' NVTX depth). Must be stable. */
  onLoaded: (l: Loaded) => void,
  events: RefObject<LoadingEvents>,
): { loaded: Loaded | null; idle: () => boolean } {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const loaderRef = useRef<WindowLoader | null>(null);
  const firstData = useRef(false);

  // One loader per recording.
  useEffect(() => {
    const loader = new WindowLoader(
      getApi(),
      recordingId,
      (l) => {
        setLoaded(l);
        onLoaded(l);
        if (!firstData.current) {
          firstData.current = true;
          events.current.onFirstData?.();
        }
      },
      (err) => events.current.onError(err),
    );
    loaderRef.current = loader;
    setLoaded(null);
    firstData.current = false;
    return () => loader.dispose();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- one loader per recording; onLoaded is stable and the events are read through their ref
  }, [recordingId]);

  // The recording grew (before the update below, which then asks again).
  const { view, width, dpr, rows, devices, busyDevices, revision } = wanted;
  useEffect(() => {
    if (revision !== undefined) loaderRef.current?.refresh();
  }, [revision]);

  useEffect(() => {
    loaderRef.current?.update(view, width, dpr, rows, devices, busyDevices);
  }, [view, width, dpr, rows, devices, busyDevices, loaded, revision]);

  useEffect(() => {
    events.current.onStatus?.({
      items: loaded?.itemCount ?? 0,
      coverage: loaded?.coverageCount ?? 0,
      resolutionNs: loaded?.resolutionNs ?? 0,
      loading: !loaded,
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reports when the loaded window changes; a new onStatus callback from the parent is no reason to report again
  }, [loaded]);

  return { loaded, idle: () => loaderRef.current?.idle() ?? true };
}

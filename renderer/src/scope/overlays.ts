// What the timeline and the scope picker show of a recording's analysis,
// whatever the scope: start-up as detected (scopeInfo(id, steady state)
// .startup: the start-up band), the repeating NVTX range's instances
// (iterations(id, null, false): the iterations row, without each
// instance's top finding) and the NVTX range names (the picker). Asked once per recording and page, after the timeline's first
// frame (the analysis must not delay it), each part shown as it lands; for
// a recording being written, again when `refresh` changes (app/use-live.ts:
// at most every 5 s), the parts shown meanwhile kept until the new ones land.
import { useEffect, useState } from 'react';
import type { RangeName, Startup } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import { iterationTrack, type IterationTrack } from '../timeline/iterations.ts';
import { STEADY_STATE } from './scope.ts';

export interface Overlays {
  /** undefined: not answered yet; null: none detected. */
  startup?: Startup | null;
  iterations?: IterationTrack | null;
  ranges?: RangeName[];
}

interface Asked {
  startup: Promise<Startup | null>;
  iterations: Promise<IterationTrack | null>;
  ranges: Promise<RangeName[]>;
  /** The iterations with each instance's top finding: asked where they are shown (useIterationFindings). */
  iterationFindings?: Promise<IterationTrack | null>;
}

/** Per recording id (stable for the page's life) and refresh: the requests made, so a tab shown again asks nothing. */
const asked = new Map<string, Asked>();

function ask(id: string, refresh: number): Asked {
  const key = `${id}#${refresh}`;
  let a = asked.get(key);
  if (!a) {
    const api = getApi();
    a = {
      startup: api.scopeInfo(id, STEADY_STATE).then((i) => i.startup),
      ranges: api.ranges(id),
      // The rows alone: each instance's top finding is the range's whole diagnosis, what-ifs included (20 s at
      // 10 M operations), which the analysis thread would run ahead of the next panel's call (the Stats tab
      // clicked after the findings waited 25 s for it).
      iterations: api.iterations(id, null, false).then((it) => (it ? iterationTrack(it) : null)),
    };
    // A failure is asked again next time (a recording the analysis thread could not load now).
    const forget = () => {
      if (asked.get(key) === a) asked.delete(key);
    };
    a.startup.catch(forget);
    a.ranges.catch(forget);
    a.iterations.catch(forget);
    // The recording grew: the answers about its earlier data are not asked for again.
    for (const k of asked.keys()) if (k.startsWith(`${id}#`)) asked.delete(k);
    asked.set(key, a);
  }
  return a;
}

/** Whether the answers `a` are all in (a refresh waits for them: the analyses never overlap). */
async function settledAll(a: Asked): Promise<void> {
  await Promise.allSettled([a.startup, a.ranges, a.iterations, a.iterationFindings]);
}

/**
 * The iterations of `recordingId` with each instance's top finding
 * (iterations(id, null, true)), asked once per recording and refresh when
 * `wanted` (the Stats tab's iterations table shows them): undefined until
 * they land, null when nothing repeats or the analysis failed.
 */
export function useIterationFindings(recordingId: string | null, wanted: boolean, refresh = 0): IterationTrack | null | undefined {
  const [got, setGot] = useState<{ key: string; track: IterationTrack | null } | null>(null);
  const key = `${recordingId}#${refresh}`;
  useEffect(() => {
    if (!recordingId || !wanted) return;
    const a = ask(recordingId, refresh);
    a.iterationFindings ??= getApi()
      .iterations(recordingId, null, true)
      .then((it) => (it ? iterationTrack(it) : null));
    let live = true;
    a.iterationFindings.then(
      (track) => live && setGot({ key, track }),
      () => live && setGot({ key, track: null }),
    );
    return () => {
      live = false;
    };
  }, [recordingId, wanted, refresh, key]);
  return got?.key === key ? got.track : undefined;
}

/** The overlays of `recordingId`, asked once `ready` (after its first frame); {} until then. */
export function useOverlays(recordingId: string | null, ready: boolean, refresh = 0): Overlays {
  const [got, setGot] = useState<{ id: string | null; overlays: Overlays }>({ id: null, overlays: {} });
  useEffect(() => {
    if (!recordingId || !ready) return;
    let live = true;
    // A refresh while the last requests are on their way waits for them (use-live.ts: never overlapping).
    const pending = [...asked.entries()].find(([k]) => k.startsWith(`${recordingId}#`) && k !== `${recordingId}#${refresh}`)?.[1];
    void (pending ? settledAll(pending) : Promise.resolve()).then(() => {
      if (live) show(ask(recordingId, refresh));
    });
    const show = (a: Asked) => {
      const put = (part: Overlays) => {
        if (live) setGot((g) => ({ id: recordingId, overlays: { ...(g.id === recordingId ? g.overlays : {}), ...part } }));
      };
      // Nothing to show for a part that failed: the timeline draws without it.
      a.startup.then(
        (startup) => put({ startup }),
        () => put({ startup: null }),
      );
      a.ranges.then(
        (ranges) => put({ ranges }),
        () => put({ ranges: [] }),
      );
      a.iterations.then(
        (iterations) => put({ iterations }),
        () => put({ iterations: null }),
      );
    };
    return () => {
      live = false;
    };
  }, [recordingId, ready, refresh]);
  return got.id === recordingId ? got.overlays : {};
}

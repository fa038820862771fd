// What the compare view asks the API: each compared recording's summary
// (asked once), its alignment event (align.ts: asked again when the
// alignment changes) and the diff of the base against the recording picked
// on the scope (asked again exactly when one of the three changes).
import { useEffect, useState } from 'react';
import type { DiffSummary, RecordingSummary } from '../../../profiler/contract/api.ts';
import { getApi, toApiError } from '../api/client.ts';
import { scopeKey, type Scope } from '../scope/scope.ts';
import { anchorOf, anchorRequest, formatAlignment, type Alignment } from './align.ts';

/** The summaries of the recordings `ids` (those held are not asked again). */
export function useSummaries(ids: string[], onError: (err: unknown) => void): Map<string, RecordingSummary> {
  const [summaries, setSummaries] = useState<Map<string, RecordingSummary>>(new Map());
  useEffect(() => {
    let live = true;
    for (const id of ids) {
      if (summaries.has(id)) continue;
      getApi()
        .summary(id)
        .then((s) => {
          if (live) setSummaries((m) => new Map(m).set(id, s));
        })
        .catch(onError);
    }
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the ids by value: a new array of the same recordings asks nothing; summaries already held are skipped inside
  }, [ids.join(',')]);
  return summaries;
}

/** Each recording's alignment event (ns into it; null: not found, 0 for the origin); a recording not answered yet is absent. */
export function useAnchors(ids: string[], align: Alignment, onError: (err: unknown) => void): Map<string, number | null> {
  const [anchors, setAnchors] = useState<Map<string, number | null>>(new Map());
  const alignKey = formatAlignment(align);
  useEffect(() => {
    let live = true;
    setAnchors(new Map());
    const req = anchorRequest(align);
    for (const id of ids) {
      if (!req) {
        setAnchors((m) => new Map(m).set(id, 0));
        continue;
      }
      getApi()
        .search(id, req)
        .then((r) => {
          if (live) setAnchors((m) => new Map(m).set(id, anchorOf(align, r)));
        })
        .catch((e) => {
          if (live) {
            setAnchors((m) => new Map(m).set(id, null));
            onError(e);
          }
        });
    }
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the ids and the alignment by value (alignKey), not by object identity
  }, [ids.join(','), alignKey]);
  return anchors;
}

export interface Diff {
  /** The base, the other recording and the scope it is of. */
  key: string;
  value: DiffSummary | null;
  error: string | null;
}

/** compare() of `base` against `other` on `scope`: the answer of the current key, or null while it is on its way (or when there is none to ask). */
export function useDiff(base: string | undefined, other: string | undefined, scope: Scope): { diff: Diff | null; key: string } {
  const [diff, setDiff] = useState<Diff | null>(null);
  const key = `${base}→${other}@${scopeKey(scope)}`;
  useEffect(() => {
    if (!base || !other || other === base) return;
    let live = true;
    setDiff({ key, value: null, error: null });
    getApi()
      .compare(base, other, scope)
      .then((d) => {
        if (live) setDiff({ key, value: d, error: null });
      })
      .catch((e) => {
        if (live) setDiff({ key, value: null, error: toApiError(e).message });
      });
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the key names both recordings and the scope: the diff is asked again exactly when one of them changes
  }, [key]);
  return { diff: diff?.key === key ? diff : null, key };
}

// Answers that depend on the scope (findings, stats), fetched as the scope
// changes. A selection dragged on the ruler changes the scope many times a
// second, and each answer is an analysis on the query side that may take
// longer than the next change, so:
//   - window scopes wait SELECTION_DEBOUNCE_MS for the selection to rest
//     (the others — a pick in the scope menu, a click on an iteration — go
//     at once);
//   - an answer is shown only if it was asked for after the one shown
//     (AnswerOrder): a stale answer never replaces a newer one; one newer
//     than the shown but older than the last asked is taken (as the window
//     loader does: no starving while the selection keeps moving), and says
//     which scope it is for, with `pending` set until the last one lands;
//   - each answer comes with scopeInfo() of its scope (the label the panel
//     shows: ScopeInfo.label), from the same cached analysis;
//   - while one is awaited, how far the analysis has got is polled
//     (analysis-progress.ts), for the panel to say;
//   - a recording being written asks again for the same scope when
//     `refresh` changes (app/use-live.ts: at most every 5 s), but never
//     while the last request is on its way: a change meanwhile is asked for
//     once that one lands, so the runs never overlap and the last data
//     always gets its answer.
import { useEffect, useMemo, useRef, useState } from 'react';
import type { ScopeInfo, StreamScopeApi } from '../../../profiler/contract/api.ts';
import { getApi, toApiError } from '../api/client.ts';
import { scopeKey, type Scope } from './scope.ts';
import { useAnalysisProgress, type Waiting } from './analysis-progress.ts';

export const SELECTION_DEBOUNCE_MS = 150;

/** The order of requests and which answers may still be shown. */
export class AnswerOrder {
  #asked = 0;
  #shown = 0;

  /** Numbers a request about to be sent. */
  ask(): number {
    return ++this.#asked;
  }

  /** Whether the answer to request `n` may be shown (it is newer than the one shown); if so, it is now the one shown. */
  take(n: number): boolean {
    if (n <= this.#shown) return false;
    this.#shown = n;
    return true;
  }

  /** Whether `n` is the last request sent (its failure is worth showing). */
  isLast(n: number): boolean {
    return n === this.#asked;
  }
}

type ScopedMethod = 'findings' | 'stats';
export type AnswerOf<M extends ScopedMethod> = Awaited<ReturnType<StreamScopeApi[M]>>;

export interface ScopedAnswer<T> {
  scope: Scope;
  info: ScopeInfo;
  value: T;
}

export interface ScopedState<T> {
  /** The newest answer received: for `scope` once it lands, until then possibly for an earlier one. */
  shown: ScopedAnswer<T> | null;
  /** The scope asked for is not the one shown yet. */
  pending: boolean;
  /** Why the scope asked for has no answer ('bad-request': a range the recording lacks). */
  error: string | null;
  /** While pending: how far the analysis has got, and since when the panel waits (analysis-progress.ts). */
  waiting: Waiting | null;
}

/**
 * `method` of recording `recordingId` on `scope`, refetched when either
 * changes (not before `enabled`: the findings wait for the first frame).
 */
export function useScopedAnswer<M extends ScopedMethod>(
  method: M,
  recordingId: string | null,
  scope: Scope,
  enabled = true,
  refresh = 0,
): ScopedState<AnswerOf<M>> {
  const key = scopeKey(scope);
  const [got, setGot] = useState<{ id: string | null; shown: ScopedAnswer<AnswerOf<M>> | null; error: { key: string; message: string } | null }>({
    id: null,
    shown: null,
    error: null,
  });
  const order = useRef(new AnswerOrder());
  const current = useRef(recordingId);
  current.current = recordingId;
  // Requests on their way, and a refresh that came meanwhile (sent when they are all in).
  const inFlight = useRef(0);
  const deferred = useRef<(() => void) | null>(null);
  const asked = useRef<{ id: string | null; key: string }>({ id: null, key: '' });
  useEffect(() => {
    if (!enabled || !recordingId) return;
    const api = getApi();
    const call = api[method] as (id: string, s: Scope) => Promise<AnswerOf<M>>;
    const send = () => {
      const n = order.current.ask();
      inFlight.current++;
      const landed = () => {
        if (--inFlight.current > 0) return;
        const later = deferred.current;
        deferred.current = null;
        later?.();
      };
      Promise.all([call.call(api, recordingId, scope), api.scopeInfo(recordingId, scope)])
        .finally(landed)
        .then(
          ([value, info]) => {
            if (current.current !== recordingId || !order.current.take(n)) return;
            // A failure of a later request stays (an earlier answer may land after it).
            setGot((g) => ({ id: recordingId, shown: { scope, info, value }, error: g.id === recordingId && g.error?.key !== key ? g.error : null }));
          },
          (err: unknown) => {
            if (current.current !== recordingId || !order.current.isLast(n)) return;
            const message = toApiError(err).message;
            setGot((g) => ({ id: recordingId, shown: g.id === recordingId ? g.shown : null, error: { key, message } }));
          },
        );
    };
    // Only the data changed (same recording and scope): not while an answer is on its way.
    const sameQuestion = asked.current.id === recordingId && asked.current.key === key;
    asked.current = { id: recordingId, key };
    if (sameQuestion && inFlight.current > 0) {
      deferred.current = send;
      return;
    }
    deferred.current = null;
    if (scope.kind !== 'window' || sameQuestion) {
      send();
      return;
    }
    const t = setTimeout(send, SELECTION_DEBOUNCE_MS);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the scope by its key: a new object for the same scope asks nothing
  }, [method, recordingId, key, enabled, refresh]);
  const shown = got.id === recordingId ? got.shown : null;
  const error = got.id === recordingId && got.error?.key === key ? got.error.message : null;
  const pending = error === null && (shown === null || scopeKey(shown.scope) !== key);
  const waiting = useAnalysisProgress(recordingId, enabled && pending);
  // The same object while nothing changed: the panels are memoised (the app re-renders on every pan).
  return useMemo(() => ({ shown, pending, error, waiting }), [shown, pending, error, waiting]);
}

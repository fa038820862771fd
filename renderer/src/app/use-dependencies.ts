// The dependencies of the selected item (api.dependencies: event waits with
// their wait time, the legacy barrier, synchronize calls, the critical
// chain), asked for when the selection changes, beside its details: the
// timeline draws them as arrows, the details panel lists them. They come
// from the analysis thread, so they may arrive after the details; the
// launch arrow (from the details) is drawn meanwhile.
import { useEffect, useState } from 'react';
import type { ItemDependencies, ItemRef, RecordingSummary } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import type { Report } from '../base/callbacks.ts';

export interface DependenciesState {
  dependencies: ItemDependencies | null;
  /** An answer for the selection is on its way. */
  pending: boolean;
}

export function useDependencies(summary: RecordingSummary | null, selected: ItemRef | null, report: Report): DependenciesState {
  const api = getApi();
  const [state, setState] = useState<DependenciesState>({ dependencies: null, pending: false });
  useEffect(() => {
    if (!summary || !selected) {
      setState({ dependencies: null, pending: false });
      return;
    }
    let live = true;
    setState({ dependencies: null, pending: true });
    api
      .dependencies(summary.recordingId, selected)
      .then((d) => {
        if (live) setState({ dependencies: d, pending: false });
      })
      .catch((e) => {
        if (!live) return;
        setState({ dependencies: null, pending: false });
        report(e);
      });
    return () => {
      live = false;
    };
  }, [api, summary, selected, report]);
  return state;
}

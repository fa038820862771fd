// The details of the selected item (every field of details(), its launch ↔
// GPU work links), asked for when the selection changes. Another recording
// shown starts with none.
import { useEffect, useState } from 'react';
import type { ItemDetails, ItemRef, RecordingSummary } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import type { Report } from '../base/callbacks.ts';

export function useDetails(summary: RecordingSummary | null, selected: ItemRef | null, report: Report): ItemDetails | null {
  const api = getApi();
  const [details, setDetails] = useState<ItemDetails | null>(null);
  // Another recording shown: the details of the last one go at once (React's "adjusting state when a prop changes").
  const [shownFor, setShownFor] = useState(summary);
  if (shownFor !== summary) {
    setShownFor(summary);
    setDetails(null);
  }
  useEffect(() => {
    if (!summary || !selected) {
      setDetails(null);
      return;
    }
    let live = true;
    api
      .details(summary.recordingId, selected)
      .then((d) => {
        if (live) setDetails(d);
      })
      .catch((e) => {
        if (live) report(e);
      });
    return () => {
      live = false;
    };
  }, [api, summary, selected, report]);
  return details;
}

// The Query tab's state: per recording, the SQL typed and the last answer
// (kept while another tab or recording is shown), running a query through
// the API's sql() (contract/sql.ts: rows, or why none), and showing an
// operation a result names on the timeline: details() gives its row and
// times, then the same goTo that search results and related items use.
import { useCallback, useRef, useState } from 'react';
import type { ItemRef, RecordingSummary, SqlAnswer } from '../../../profiler/contract/api.ts';
import { SQL_EXAMPLES } from '../../../profiler/contract/sql.ts';
import { getApi } from '../api/client.ts';
import type { GoTo, Report } from '../base/callbacks.ts';

export interface QueryState {
  text: string;
  setText: (text: string) => void;
  /** The last answer, with the text it answered (an error's position is into that text). */
  answer: { query: string; answer: SqlAnswer } | null;
  running: boolean;
  /** Runs `text` (or the text given: an example). */
  run: (text?: string) => void;
  /** Shows the operation on the timeline (and switches to it). */
  show: (ref: ItemRef) => void;
}

interface Kept {
  text: string;
  answer: QueryState['answer'];
}

export function useQuery(summary: RecordingSummary | null, goTo: GoTo, showTimeline: () => void, report: Report): QueryState {
  const api = getApi();
  const id = summary?.recordingId ?? null;
  const kept = useRef(new Map<string, Kept>());
  const [running, setRunning] = useState(false);
  const [, rerender] = useState(0);
  const current: Kept = (id && kept.current.get(id)) || { text: SQL_EXAMPLES[0]!.sql, answer: null };
  /** Asked last, per recording: an answer to an older query is dropped. */
  const asked = useRef(new Map<string, number>());

  const update = useCallback((recordingId: string, change: Partial<Kept>) => {
    const was = kept.current.get(recordingId) ?? { text: SQL_EXAMPLES[0]!.sql, answer: null };
    kept.current.set(recordingId, { ...was, ...change });
    rerender((n) => n + 1);
  }, []);

  const setText = useCallback((text: string) => id && update(id, { text }), [id, update]);

  const run = useCallback(
    (text?: string) => {
      if (!id) return;
      const query = text ?? kept.current.get(id)?.text ?? SQL_EXAMPLES[0]!.sql;
      if (text !== undefined) update(id, { text });
      const n = (asked.current.get(id) ?? 0) + 1;
      asked.current.set(id, n);
      setRunning(true);
      api
        .sql(id, { query })
        .then(
          (answer) => {
            if (asked.current.get(id) === n) update(id, { answer: { query, answer } });
          },
          // The file's problem (locked, gone), not the query's: a banner, as everywhere.
          (e) => report(e, summary?.path),
        )
        .finally(() => {
          if (asked.current.get(id) === n) setRunning(false);
        });
    },
    [api, id, update, report, summary?.path],
  );

  const show = useCallback(
    (ref: ItemRef) => {
      if (!id) return;
      api
        .details(id, ref)
        .then((d) => {
          goTo(ref, d.rowId, d.startNs, d.endNs);
          showTimeline();
        })
        .catch((e) => report(e, summary?.path));
    },
    [api, id, goTo, showTimeline, report, summary?.path],
  );

  return { text: current.text, setText, answer: current.answer, running, run, show };
}

// The bar under the toolbar, for the shown recording: the view tabs
// (Timeline, Stats, Query, and Compare when several recordings are open),
// the search bar, the hidden rows (each can be shown again, or all), the
// live badge of a recording being written, and the GPUs and command it ran.
import type { Dispatch, SetStateAction } from 'react';
import type { RecordingState, RecordingSummary } from '../../../profiler/contract/api.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { SearchBox } from './SearchBox.tsx';
import type { UrlState } from './url-state.ts';
import type { Search } from './use-search.ts';

type Tab = UrlState['tab'];

export function SubBar(props: {
  summary: RecordingSummary;
  tab: Tab;
  onTab: (tab: Tab) => void;
  /** Compare is offered (several recordings open) and opens it. */
  canCompare: boolean;
  onCompare: () => void;
  search: Search;
  hidden: Set<string>;
  onHidden: Dispatch<SetStateAction<Set<string>>>;
  /** A row's name for the hidden rows' menu. */
  rowName: Map<string, string>;
  live: RecordingState | null;
}) {
  const { summary, tab, hidden, live } = props;
  return (
    <div className="subbar">
      <ViewTabs tab={tab} onTab={props.onTab} canCompare={props.canCompare} onCompare={props.onCompare} />
      {tab !== 'compare' && tab !== 'query' && <SearchBox search={props.search} />}
      {tab !== 'compare' && hidden.size > 0 && <HiddenRows hidden={hidden} onHidden={props.onHidden} rowName={props.rowName} />}
      <span className="spacer" />
      {live?.live && (
        <span className="live-badge" data-testid="live-badge" data-end-ns={live.endNs} title="Being recorded: the timeline follows it as it grows">
          ● live · {formatDuration(live.endNs - live.startNs)} · {(live.counts.kernels + live.counts.memcpys + live.counts.memsets).toLocaleString('en-US')} GPU
          ops
        </span>
      )}
      <span className="meta" title={summary.meta.command ?? summary.path}>
        {summary.devices
          .map((d) => d.name)
          .filter(Boolean)
          .join(', ')}
        {summary.meta.command ? ` · ${summary.meta.command}` : ''}
      </span>
    </div>
  );
}

function ViewTabs(props: { tab: Tab; onTab: (tab: Tab) => void; canCompare: boolean; onCompare: () => void }) {
  const { tab, onTab } = props;
  return (
    <span className="view-tabs">
      <button className={tab === 'timeline' ? 'on' : ''} data-testid="tab-timeline" onClick={() => onTab('timeline')}>
        Timeline
      </button>
      <button className={tab === 'stats' ? 'on' : ''} data-testid="tab-stats" onClick={() => onTab('stats')}>
        Stats
      </button>
      <button
        className={tab === 'query' ? 'on' : ''}
        data-testid="tab-query"
        onClick={() => onTab('query')}
        title="SQL on the recording (read-only); rows that name an operation link to the timeline"
      >
        Query
      </button>
      {props.canCompare && (
        <button
          className={tab === 'compare' ? 'on' : ''}
          data-testid="tab-compare"
          onClick={props.onCompare}
          title="The open recordings stacked on one time axis, with what changed"
        >
          Compare
        </button>
      )}
    </span>
  );
}

function HiddenRows(props: { hidden: Set<string>; onHidden: Dispatch<SetStateAction<Set<string>>>; rowName: Map<string, string> }) {
  const { hidden } = props;
  return (
    <select
      className="hidden-rows"
      data-testid="hidden-rows"
      value=""
      onChange={(e) => {
        const v = e.target.value;
        if (v === '*') props.onHidden(new Set());
        else if (v)
          props.onHidden((h) => {
            const n = new Set(h);
            n.delete(v);
            return n;
          });
      }}
    >
      <option value="">
        {hidden.size} hidden row{hidden.size === 1 ? '' : 's'} — show…
      </option>
      <option value="*">all rows</option>
      {[...hidden].map((id) => (
        <option key={id} value={id}>
          {props.rowName.get(id) ?? id}
        </option>
      ))}
    </select>
  );
}

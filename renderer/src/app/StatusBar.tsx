// The status bar: the colours' legend, and on the timeline the visible range
// (once the view holds still: base/use-settled.ts), what the loaded window
// holds and at what resolution, and a way out of a finding's evidence
// highlight.
import { formatDuration } from '../../../profiler/contract/time.ts';
import { ALL_KINDS, KIND_COLORS, KIND_LABELS } from '../base/colors.ts';
import { formatTimestamp } from '../base/time.ts';
import { useSettled } from '../base/use-settled.ts';
import type { View } from '../timeline/Timeline.tsx';

/** What the timeline reports of its loaded window (Timeline's onStatus). */
export interface TimelineStatus {
  items: number;
  coverage: number;
  resolutionNs: number;
  loading: boolean;
}

export function StatusBar(props: {
  /** The shown recording's view (null: none), and whether the timeline is the tab shown. */
  view: View | null;
  onTimeline: boolean;
  status: TimelineStatus | null;
  /** A finding's evidence is highlighted: offer to clear it. */
  onClearEvidence: (() => void) | null;
}) {
  const { status } = props;
  // The status bar's range follows the view once it holds still (base/use-settled.ts).
  const shownView = useSettled(props.view) ?? props.view;
  return (
    <footer className="statusbar">
      <span className="legend" data-testid="legend">
        {ALL_KINDS.map((k) => (
          <span key={k} className="lg">
            <i className={`swatch k-${k}`} style={{ background: KIND_COLORS[k] }} />
            {KIND_LABELS[k]}
          </span>
        ))}
      </span>
      <span className="spacer" />
      {props.onTimeline && shownView && (
        <span className="status" data-testid="status">
          {formatTimestamp(shownView.start, (shownView.end - shownView.start) / 1000)} –{' '}
          {formatTimestamp(shownView.end, (shownView.end - shownView.start) / 1000)} · {formatDuration(shownView.end - shownView.start)}
          {status &&
            ` · ${status.items.toLocaleString('en-US')} ops, ${status.coverage.toLocaleString('en-US')} merged spans at ${formatDuration(status.resolutionNs)}/px`}
        </span>
      )}
      {props.onClearEvidence && (
        <button className="linkish status-action" data-testid="clear-evidence" onClick={props.onClearEvidence}>
          clear evidence highlight
        </button>
      )}
    </footer>
  );
}

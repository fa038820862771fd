// The timeline's corner above the label column: Fit, zoom in and out, the
// shortcut sheet, the visible span (once the view holds still:
// base/use-settled.ts), and, for a live recording the view no longer
// follows, "Jump to now".
import { formatDuration } from '../../../profiler/contract/time.ts';
import { useSettled } from '../base/use-settled.ts';
import { LABEL_W } from './Labels.tsx';
import type { View } from './view.ts';

export function ViewControls(props: {
  view: View;
  onFit: () => void;
  /** Zoom by this factor around the view's middle. */
  onZoom: (factor: number) => void;
  onShortcuts: () => void;
  live?: { following: boolean; onJumpToNow: () => void } | null;
}) {
  const shownView = useSettled(props.view);
  return (
    <div className="tl-corner" style={{ width: LABEL_W }}>
      <button data-testid="zoom-all" title="Show the whole recording (0)" onClick={props.onFit}>
        Fit
      </button>
      <button data-testid="zoom-in" title="Zoom in (W)" onClick={() => props.onZoom(0.5)}>
        +
      </button>
      <button data-testid="zoom-out" title="Zoom out (S)" onClick={() => props.onZoom(2)}>
        −
      </button>
      <button data-testid="shortcuts" title="Keys and mouse gestures (?)" onClick={props.onShortcuts}>
        ?
      </button>
      <span className="tl-span" data-testid="view-span" title="Visible time span">
        {formatDuration(shownView.end - shownView.start)}
      </span>
      {props.live && !props.live.following && (
        <button className="jump-now" data-testid="jump-to-now" title="Back to the newest data, and follow it" onClick={props.live.onJumpToNow}>
          Jump to now ▸|
        </button>
      )}
    </div>
  );
}

// The Timeline tab: the shown recording's timeline, and beside it the
// details of the selection (with its dependencies) and the findings of the
// scope. The shell (App.tsx) hands it the recording's state and the
// analyses; this file only wires them to the views.
import type { ItemDetails, RecordingState, RecordingSummary } from '../../../profiler/contract/api.ts';
import { DetailsPanel } from '../panels/DetailsPanel.tsx';
import { FindingsPanel } from '../panels/FindingsPanel.tsx';
import { Timeline, type View } from '../timeline/Timeline.tsx';
import type { TimelineStatus } from './StatusBar.tsx';
import type { Analyses } from './use-analyses.ts';
import type { Report } from '../base/callbacks.ts';
import type { DependenciesState } from './use-dependencies.ts';
import type { Follow } from './use-live.ts';
import type { Navigation } from './use-navigation.ts';
import type { RecordingUi } from './use-recording-ui.ts';
import type { Search } from './use-search.ts';

export function TimelineTab(props: {
  /** The shown recording, its summary and view known. */
  ui: RecordingUi & { summary: RecordingSummary; view: View };
  details: ItemDetails | null;
  dependencies: DependenciesState;
  search: Search;
  analyses: Analyses;
  navigation: Navigation;
  live: RecordingState | null;
  follow: Follow;
  onStatus: (s: TimelineStatus) => void;
  onError: Report;
}) {
  const { ui, details, dependencies, analyses, navigation, live, follow } = props;
  const { summary, scope } = ui;
  return (
    <>
      <Timeline
        summary={summary}
        view={ui.view}
        onView={ui.setView}
        selected={ui.selected}
        onSelect={ui.setSelected}
        details={details}
        search={props.search.highlight}
        hidden={ui.hidden}
        onHidden={ui.setHidden}
        folded={ui.folded}
        onFolded={ui.setFolded}
        onFirstData={ui.onFirstData}
        onError={props.onError}
        onStatus={props.onStatus}
        reveal={ui.reveal}
        range={ui.range}
        onRange={ui.onRange}
        startup={analyses.overlays.startup}
        iterations={analyses.iterations}
        chosenInstance={analyses.chosenInstance}
        onIteration={ui.onIteration}
        dependencies={dependencies.dependencies}
        dependenciesPending={dependencies.pending}
        live={
          live && (live.live || follow.following)
            ? { revision: live.revision, endNs: live.endNs, following: follow.following, onJumpToNow: follow.jumpToNow }
            : null
        }
      />
      <aside className="side">
        <DetailsPanel
          details={details}
          summary={summary}
          loading={!!ui.selected && !details}
          onGo={navigation.onGoRelated}
          dependencies={dependencies.dependencies}
          onGoDependency={navigation.onGoDependency}
        />
        <FindingsPanel
          answer={analyses.findings}
          onShow={navigation.showFinding}
          scope={scope}
          onScope={ui.setScope}
          ranges={analyses.overlays.ranges}
          selection={ui.selection}
        />
      </aside>
    </>
  );
}

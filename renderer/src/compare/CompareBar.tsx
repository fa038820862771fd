// The compare view's bar: the recordings compared (the base first; any
// other can be made the base), the alignment (the first GPU operation, the
// n-th of a kernel or NVTX range named, the recordings' starts), the diff's
// scope, linked or independent zoom, and which recording the base is diffed
// against when there are more than two.
import type { RangeName, RecordingHandle } from '../../../profiler/contract/api.ts';
import { ScopePicker } from '../scope/ScopePicker.tsx';
import type { Alignment } from './align.ts';
import type { CompareState } from './compare-state.ts';
import type { CompareEdits } from './use-compare-edits.ts';

export function CompareBar(props: {
  recordings: RecordingHandle[];
  ids: string[];
  state: CompareState;
  edits: CompareEdits;
  /** The base's NVTX ranges, for the scope menu. */
  baseRanges: RangeName[] | undefined;
  otherIndex: number;
  onOtherIndex: (i: number) => void;
}) {
  const { recordings, ids, state, edits } = props;
  return (
    <div className="cmp-bar">
      <span className="cmp-pick">
        {recordings.map((r) => (
          <label key={r.recordingId} className={ids[0] === r.recordingId ? 'base' : ''} title={r.path}>
            <input type="checkbox" data-testid="compare-pick" checked={ids.includes(r.recordingId)} onChange={() => edits.toggle(r.recordingId)} />
            {r.name}
            {ids.includes(r.recordingId) && ids[0] !== r.recordingId && (
              <button className="linkish" onClick={() => edits.makeBase(r.recordingId)} title="Compare the others against this one">
                make base
              </button>
            )}
          </label>
        ))}
      </span>
      <AlignPicker align={state.align} edits={edits} />
      <span className="cmp-scope" data-testid="compare-scope">
        Analyse <ScopePicker scope={state.scope} onScope={edits.setScope} ranges={props.baseRanges} selection={null} />
      </span>
      <label className="cmp-linked" title="Zoom and pan all recordings together">
        <input type="checkbox" data-testid="compare-linked" checked={state.linked} onChange={(e) => edits.setLinked(e.target.checked)} /> linked zoom
      </label>
      {ids.length > 2 && (
        <label>
          Diff base against
          <select data-testid="diff-other" value={props.otherIndex} onChange={(e) => props.onOtherIndex(Number(e.target.value))}>
            {ids.slice(1).map((id, i) => (
              <option key={id} value={i + 1}>
                {recordings.find((r) => r.recordingId === id)?.name}
              </option>
            ))}
          </select>
        </label>
      )}
    </div>
  );
}

/** What the recordings are aligned at; for a kernel or an NVTX range, its name and which occurrence. */
function AlignPicker(props: { align: Alignment; edits: CompareEdits }) {
  const { align, edits } = props;
  const nameInput = align.by === 'kernel' || align.by === 'nvtx' ? align : null;
  return (
    <span className="cmp-align">
      Align at
      <select
        data-testid="align-by"
        value={align.by}
        onChange={(e) => {
          const by = e.target.value as Alignment['by'];
          const now = edits.latest.current.align;
          const named = now.by === 'kernel' || now.by === 'nvtx' ? now : null;
          edits.setAlign(by === 'kernel' || by === 'nvtx' ? { by, name: named?.name ?? '', occurrence: named?.occurrence ?? 1 } : ({ by } as Alignment));
        }}
      >
        <option value="first-gpu">first GPU operation</option>
        <option value="kernel">a kernel…</option>
        <option value="nvtx">an NVTX range…</option>
        <option value="origin">recording start</option>
      </select>
      {nameInput && (
        <>
          <input
            data-testid="align-name"
            placeholder={align.by === 'kernel' ? 'kernel name' : 'range name'}
            defaultValue={nameInput.name}
            onKeyDown={(e) => {
              if (e.key === 'Enter') edits.editNamed({ name: (e.target as HTMLInputElement).value.trim() });
            }}
            onBlur={(e) => {
              if (e.target.value.trim() !== nameInput.name) edits.editNamed({ name: e.target.value.trim() });
            }}
          />
          #
          <input
            data-testid="align-occurrence"
            type="number"
            min={1}
            className="num-input"
            value={nameInput.occurrence}
            onChange={(e) => edits.editNamed({ occurrence: Math.max(1, Number(e.target.value) || 1) })}
            title="Which occurrence (1 = the first)"
          />
        </>
      )}
    </span>
  );
}

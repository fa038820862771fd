// The toolbar: the open recordings as tabs (closable when there are several),
// and what this app can do with files — Open…, Recent, Export…, Record… —
// shown only where it can (capabilities(): the desktop app; browser mode is
// read-only), and the version or mode.
import type { Capabilities, RecordingHandle } from '../../../profiler/contract/api.ts';

export function Toolbar(props: {
  caps: Capabilities | null;
  recordings: RecordingHandle[];
  activeId: string | null;
  onSelect: (recordingId: string) => void;
  onClose: (recordingId: string) => void;
  recent: string[];
  onOpenDialog: () => void;
  onOpenPath: (path: string) => void;
  onExport: () => void;
  onRecord: () => void;
}) {
  const { caps, recordings, activeId, recent } = props;
  return (
    <header className="toolbar">
      <span className="brand">StreamScope</span>
      <nav className="rec-tabs" data-testid="recording-tabs">
        {recordings.map((r) => (
          <span key={r.recordingId} className={`rec-tab${r.recordingId === activeId ? ' on' : ''}`}>
            <button data-testid="recording-tab" title={r.path} onClick={() => props.onSelect(r.recordingId)}>
              {r.name}
            </button>
            {recordings.length > 1 && (
              <button className="close" title="Close this tab" onClick={() => props.onClose(r.recordingId)}>
                ×
              </button>
            )}
          </span>
        ))}
      </nav>
      <span className="spacer" />
      {caps?.canOpenFiles && (
        <button data-testid="open-file" onClick={props.onOpenDialog}>
          Open…
        </button>
      )}
      {caps?.canOpenFiles && recent.length > 0 && (
        <select
          className="recent"
          data-testid="recent-files"
          value=""
          onChange={(e) => {
            if (e.target.value) props.onOpenPath(e.target.value);
          }}
        >
          <option value="">Recent…</option>
          {recent.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      )}
      {caps?.canOpenFiles && activeId && (
        <button data-testid="export-trace" title="Export the shown recording as Chrome trace JSON (Perfetto UI, chrome://tracing)" onClick={props.onExport}>
          Export…
        </button>
      )}
      {caps?.canRecord && (
        <button className="primary" data-testid="record-open" onClick={props.onRecord}>
          Record…
        </button>
      )}
      {caps && (
        <span className="mode" title={`StreamScope ${caps.version}`}>
          {caps.mode === 'browser' ? 'browser mode · read-only' : `v${caps.version}`}
        </span>
      )}
    </header>
  );
}

// The banners above the views (use-banners.ts decides what they say), each
// with its file when it names one, dismissable.
import type { Banner } from './use-banners.ts';

export function Banners(props: { banners: Banner[]; onDismiss: (id: number) => void }) {
  return (
    <div className="banners">
      {props.banners.map((b) => (
        <div key={b.id} className={`banner banner-${b.level}`} role="alert" data-testid={`${b.level}-banner`}>
          <span className="b-text">
            <strong>{b.title}</strong>
            {b.file && (
              <>
                {' '}
                · <code className="b-file">{b.file}</code>
              </>
            )}
            <br />
            {b.message}
          </span>
          <button className="b-close" title="Dismiss" onClick={() => props.onDismiss(b.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** What the page says with no recording open: how to open one, where this app can. */
export function NoRecording(props: { canOpenFiles: boolean; canRecord: boolean }) {
  return (
    <div className="empty" data-testid="empty">
      <h1>No recording open</h1>
      {props.canOpenFiles ? (
        <p>
          Open a recording (<b>Open…</b>), drop a <code>.sqlite</code> file here
          {props.canRecord ? (
            <>
              , or <b>Record…</b> a run
            </>
          ) : null}
          .
        </p>
      ) : (
        <p>
          Browser mode shows the recordings given on the command line: <code>streamscope serve run.sqlite</code>.
        </p>
      )}
    </div>
  );
}

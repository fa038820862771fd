// The shortcut sheet (`?`): every key and mouse gesture of the timeline and
// what it does, read from keys.ts's tables — the ones the keys are handled
// by — so the sheet cannot promise a key that does something else. Esc, `?`
// (use-timeline-keys.ts), the close button or a click beside it close it.
import { GESTURES, keyLabel, SHORTCUTS } from './keys.ts';

export function ShortcutSheet(props: { onClose: () => void }) {
  return (
    <div
      className="modal-backdrop"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) props.onClose();
      }}
    >
      <div className="modal shortcut-sheet" role="dialog" aria-labelledby="shortcut-title" data-testid="shortcut-sheet">
        <h2 id="shortcut-title">Timeline keys and mouse</h2>
        <table>
          <tbody>
            {SHORTCUTS.map((s) => (
              <tr key={s.action} data-testid="shortcut" data-action={s.action}>
                <th>
                  {s.keys.map((k) => (
                    <kbd key={k}>{keyLabel(k)}</kbd>
                  ))}
                </th>
                <td>{s.does}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <table>
          <tbody>
            {GESTURES.map((g) => (
              <tr key={g.gesture} data-testid="gesture">
                <th>{g.gesture}</th>
                <td>{g.does}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="hint">Keys act unless you are typing (the search box, the SQL editor).</p>
        <div className="buttons">
          <button data-testid="shortcut-close" onClick={props.onClose} autoFocus>
            Close
          </button>
        </div>
      </div>
    </div>
  );
}

// A value as it was once it stopped changing: for text readouts of the view
// (its span, its start and end). While a pan or zoom changes the view in
// every frame, the ruler (a canvas) is the live readout; text in the DOM
// that changed in every frame would cost each frame a paint, a layerize and
// a commit of the document (1–2 ms a frame on 2 cores; the renderer
// benchmark), so these follow once the view holds still.
import { useEffect, useState } from 'react';

/** How long the view must hold still before its text readouts follow it. */
export const READOUT_SETTLE_MS = 100;

export function useSettled<T>(value: T, ms = READOUT_SETTLE_MS): T {
  const [shown, setShown] = useState(value);
  useEffect(() => {
    if (Object.is(value, shown)) return;
    const t = setTimeout(() => setShown(value), ms);
    return () => clearTimeout(t);
  }, [value, shown, ms]);
  return shown;
}

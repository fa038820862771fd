// The timeline's keys (keys.ts says which does what) on the window: a press
// of W/A/S/D (or the arrows, + and -) makes one step at once; held, the key
// moves the view in every animation frame until it is released, as in
// Perfetto — the keyboard's own repeat (a jerky 30 steps a second, after
// half a second) is ignored. Held keys are told apart by KeyboardEvent.code,
// the physical key, which stays the same when Shift is let go before it
// ('+' pressed, '=' released). The shortcut sheet's open state lives here:
// `?` opens it, Esc or `?` closes it, and while it is open no other key acts.
import { useCallback, useEffect, useRef, useState } from 'react';
import { heldMove, isMotion, keyAction, TAP_PAN, TAP_ZOOM, type KeyAction, type Motion } from './keys.ts';

/** What the keys ask of the timeline; read when a key acts, so they may change every render. */
export interface KeyTargets {
  /** Whether the keys act on this timeline now (a compare view's unfocused lanes: no). */
  enabled: () => boolean;
  /**
   * Zoom by `factor` (< 1: in) around the mouse, or the view's middle, then
   * pan by `fraction` of the view's width (> 0: later): one new view, as the
   * keys held together (W and D) move it in one frame.
   */
  move: (factor: number, fraction: number) => void;
  /** The keys that do one thing once. */
  act: (a: Exclude<KeyAction, Motion | 'help'>) => void;
}

interface Held {
  motion: Motion;
  /** performance.now() of the press, and of the frame that last moved the view for it. */
  since: number;
  last: number;
}

export function useTimelineKeys(targets: KeyTargets): { sheet: boolean; setSheet: (open: boolean) => void } {
  const latest = useRef(targets);
  latest.current = targets;
  const [sheet, setSheetState] = useState(false);
  const sheetOpen = useRef(false);
  const setSheet = useCallback((open: boolean) => {
    sheetOpen.current = open;
    setSheetState(open);
  }, []);

  useEffect(() => {
    const held = new Map<string, Held>();
    let frame: number | null = null;
    const stop = () => {
      held.clear();
      if (frame !== null) cancelAnimationFrame(frame);
      frame = null;
    };
    const step = () => {
      frame = null;
      if (!latest.current.enabled()) return stop();
      const now = performance.now();
      let zoom = 1;
      let pan = 0;
      for (const h of held.values()) {
        const move = heldMove(h.motion, h.last - h.since, now - h.since);
        if (h.motion === 'zoom-in' || h.motion === 'zoom-out') zoom *= move;
        else pan += move;
        h.last = now;
      }
      if (zoom !== 1 || pan !== 0) latest.current.move(zoom, pan);
      if (held.size) frame = requestAnimationFrame(step);
    };
    const onDown = (e: KeyboardEvent) => {
      const t = latest.current;
      if (!t.enabled()) return;
      const a = keyAction(e);
      if (sheetOpen.current) {
        // The sheet is modal: Esc or ? close it, nothing else acts behind it.
        if (a === 'clear' || a === 'help') {
          setSheet(false);
          e.preventDefault();
        }
        return;
      }
      if (a === null) return;
      e.preventDefault();
      if (a === 'help') setSheet(true);
      else if (!isMotion(a)) t.act(a);
      else if (!e.repeat && !held.has(e.code || e.key)) {
        if (a === 'zoom-in') t.move(TAP_ZOOM, 0);
        else if (a === 'zoom-out') t.move(1 / TAP_ZOOM, 0);
        else t.move(1, a === 'pan-left' ? -TAP_PAN : TAP_PAN);
        const now = performance.now();
        held.set(e.code || e.key, { motion: a, since: now, last: now });
        frame ??= requestAnimationFrame(step);
      }
    };
    // Any release counts, wherever the focus went since the press.
    const onUp = (e: KeyboardEvent) => {
      held.delete(e.code || e.key);
    };
    // A key held while the window loses focus sends no keyup here: it would move on forever.
    window.addEventListener('keydown', onDown);
    window.addEventListener('keyup', onUp);
    window.addEventListener('blur', stop);
    return () => {
      window.removeEventListener('keydown', onDown);
      window.removeEventListener('keyup', onUp);
      window.removeEventListener('blur', stop);
      stop();
    };
  }, [setSheet]);

  return { sheet, setSheet };
}

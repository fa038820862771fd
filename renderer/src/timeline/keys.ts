// The timeline's keys, as Perfetto and Nsight Systems have them: one table
// says which key does what, and the shortcut sheet (ShortcutSheet.tsx) lists
// that same table, so the two cannot disagree. Pure: use-timeline-keys.ts
// listens and moves the view.
//
// Arrows: ← / → pan and ↑ / ↓ zoom, as W/A/S/D do (Nsight Systems' arrows
// step the view the same way); the rows scroll with the wheel or a drag.

/** What a key does. The first four move the view for as long as the key is held. */
export type KeyAction = 'zoom-in' | 'zoom-out' | 'pan-left' | 'pan-right' | 'fit' | 'focus' | 'zoom-range' | 'clear' | 'help';

export const MOTIONS = ['zoom-in', 'zoom-out', 'pan-left', 'pan-right'] as const satisfies readonly KeyAction[];
export type Motion = (typeof MOTIONS)[number];

export interface Shortcut {
  /** KeyboardEvent.key values, lower case for letters. */
  keys: string[];
  action: KeyAction;
  /** What the sheet says it does. */
  does: string;
}

export const SHORTCUTS: Shortcut[] = [
  {
    keys: ['w', 'ArrowUp', '+', '='],
    action: 'zoom-in',
    does: 'Zoom in around the mouse (the middle of the view when the mouse is elsewhere); hold to keep zooming',
  },
  { keys: ['s', 'ArrowDown', '-'], action: 'zoom-out', does: 'Zoom out; hold to keep zooming' },
  { keys: ['a', 'ArrowLeft'], action: 'pan-left', does: 'Pan left (earlier); hold to keep moving' },
  { keys: ['d', 'ArrowRight'], action: 'pan-right', does: 'Pan right (later); hold to keep moving' },
  { keys: ['0'], action: 'fit', does: 'Show the whole recording (Fit)' },
  { keys: ['f'], action: 'focus', does: 'Zoom to the selected operation; the whole recording when none is selected' },
  { keys: ['z'], action: 'zoom-range', does: 'Zoom to the selected time range' },
  { keys: ['Escape'], action: 'clear', does: 'Clear the selected range, else the selection; close this sheet' },
  { keys: ['?'], action: 'help', does: 'Show or hide this sheet' },
];

/** Mouse gestures, for the sheet (Timeline.tsx, Ruler.tsx and Overview.tsx handle them). */
export const GESTURES: { gesture: string; does: string }[] = [
  { gesture: 'Wheel', does: 'Zoom around the cursor' },
  { gesture: 'Shift + wheel, horizontal swipe', does: 'Pan' },
  { gesture: 'Drag', does: 'Pan (sideways) and scroll the rows (up and down)' },
  { gesture: 'Shift + drag, or drag on the ruler', does: 'Select a time range: the findings and stats analyse it' },
  { gesture: 'Double-click', does: 'Zoom to the selected range' },
  { gesture: 'Click', does: 'Select an operation (its launch, dependencies and critical chain); on a merged span, zoom into it' },
  { gesture: 'Click an iteration', does: 'Zoom to it and analyse it alone' },
  { gesture: 'Click or drag on the overview', does: 'Move the view there; Shift + drag: show that range' },
];

const BY_KEY = new Map<string, KeyAction>(SHORTCUTS.flatMap((s) => s.keys.map((k) => [k, s.action] as const)));

/** How a key reads for the sheet. */
export function keyLabel(key: string): string {
  const arrows: Record<string, string> = { ArrowUp: '↑', ArrowDown: '↓', ArrowLeft: '←', ArrowRight: '→', Escape: 'Esc' };
  return arrows[key] ?? (key.length === 1 ? key.toUpperCase() : key);
}

/** Where typed keys are text, not commands: the search box, the SQL editor, any field or editable element. */
export function isTyping(target: EventTarget | null): boolean {
  const t = target as HTMLElement | null;
  if (!t || typeof t.tagName !== 'string') return false;
  return t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable === true;
}

/**
 * The action of a key press, or null: none while typing, and none with
 * Ctrl, Cmd or Alt (the browser's and the desktop menu's own: Ctrl+0,
 * Ctrl+W, Ctrl+F). Shift is allowed: `?` and `+` need it on most layouts.
 */
export function keyAction(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey' | 'target'>): KeyAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return null;
  return BY_KEY.get(e.key.length === 1 ? e.key.toLowerCase() : e.key) ?? null;
}

export const isMotion = (a: KeyAction | null): a is Motion => (MOTIONS as readonly string[]).includes(a ?? '');

/** One press: zoom by this factor (in; its inverse out), or pan by this share of the view. */
export const TAP_ZOOM = 0.8;
export const TAP_PAN = 0.15;
/** A key held this long after the press's own step moves the view continuously, until it is released. */
export const HOLD_DELAY_MS = 150;
/** Held, at first: the view halves (or doubles) in 0.7 s, or moves by 0.9 of its width a second ... */
const ZOOM_PER_MS = Math.LN2 / 700;
const PAN_PER_MS = 0.9 / 1000;
/** ... faster the longer it is held (as Perfetto's), up to this many times that. */
const MAX_SPEEDUP = 4;
const SPEEDUP_PER_MS = 1 / 800;

/**
 * A held key's move over the frame from `fromMs` to `toMs` after it was
 * pressed: the zoom factor (zoom-in < 1 < zoom-out) or the pan share of the
 * view's width (left < 0 < right). Nothing before HOLD_DELAY_MS (the press
 * made its own step); then a speed that grows with the time held, so a
 * long hold crosses a long recording and a short one moves finely. The
 * speed is integrated over the frame, so the move does not depend on the
 * frame rate.
 */
export function heldMove(m: Motion, fromMs: number, toMs: number): number {
  const a = Math.max(fromMs, HOLD_DELAY_MS) - HOLD_DELAY_MS;
  const b = Math.max(toMs, HOLD_DELAY_MS) - HOLD_DELAY_MS;
  // ∫ min(MAX, 1 + t·k) dt from a to b.
  const knee = (MAX_SPEEDUP - 1) / SPEEDUP_PER_MS;
  const area = (t: number) => (t <= knee ? t + (SPEEDUP_PER_MS * t * t) / 2 : knee + (SPEEDUP_PER_MS * knee * knee) / 2 + MAX_SPEEDUP * (t - knee));
  const amount = area(b) - area(a);
  switch (m) {
    case 'zoom-in':
      return Math.exp(-ZOOM_PER_MS * amount);
    case 'zoom-out':
      return Math.exp(ZOOM_PER_MS * amount);
    case 'pan-left':
      return -PAN_PER_MS * amount;
    case 'pan-right':
      return PAN_PER_MS * amount;
  }
}

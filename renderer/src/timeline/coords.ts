// The timeline's coordinate spaces, named once, and the conversions between
// them (as speedscope's pan-zoom view names its configuration, logical and
// physical view spaces): no other file converts between time and pixels.
//
//   time      nanoseconds since the recording origin (contract/time.ts). A
//             View (view.ts) is a span of it: what is visible.
//   view      CSS pixels across a canvas: 0 at the view's start, `width` at
//             its end (speedscope's logical view space). The spaces below
//             share its x.
//   content   y from the top of the first row, as rows.ts lays the rows out
//             (the label column's y): where hit testing and the overlay
//             place things.
//   canvas    content y minus the vertical scroll: where a frame draws.
//   physical  device pixels, view × devicePixelRatio: the canvas's backing
//             store (its context is scaled once per frame, draw.ts), and the
//             window loader's resolution (ns per physical pixel).
//   page      client coordinates: the canvas's bounding rectangle plus
//             canvas coordinates (pointer events, the test hooks).
//
// A TimeAxis is made once per frame, per hit test or per gesture, and
// converts any number of times without allocating (draw.ts converts every
// item of a frame through it).
import type { View } from './view.ts';

/** Time ↔ view x for one view across `width` CSS pixels. */
export class TimeAxis {
  /** The view's start: view x 0. */
  readonly startNs: number;
  /** View pixels per nanosecond. */
  readonly pxPerNs: number;
  readonly width: number;

  constructor(view: View, width: number) {
    this.startNs = view.start;
    this.width = width;
    // An empty view (never one clampView made) maps everything to its start rather than to NaN.
    this.pxPerNs = width / Math.max(1e-9, view.end - view.start);
  }

  /** Where time `t` falls: view x (may lie outside 0..width). */
  timeToViewX(t: number): number {
    return (t - this.startNs) * this.pxPerNs;
  }

  /** The time at view x. */
  viewXToTime(x: number): number {
    return this.startNs + x / this.pxPerNs;
  }

  /** How many view pixels a duration covers. */
  durationToViewPx(ns: number): number {
    return ns * this.pxPerNs;
  }

  /** How long a stretch of view pixels lasts. */
  viewPxToDuration(px: number): number {
    return px / this.pxPerNs;
  }
}

/** The view's nanoseconds per physical pixel across `width` CSS pixels at `dpr`: the finest detail a frame can show (window-loader.ts rounds it to a power of two). */
export function nsPerPhysicalPx(view: View, width: number, dpr: number): number {
  return (view.end - view.start) / Math.max(1, width * dpr);
}

/** A box in content coordinates, as one in canvas coordinates (scrolled by `scrollTop`). */
export function contentToCanvas<B extends { y: number }>(b: B, scrollTop: number): B {
  return { ...b, y: b.y - scrollTop };
}

/** A box in content coordinates, as one in page coordinates, over a canvas at `canvas` (its bounding rectangle) scrolled by `scrollTop`. */
export function contentToPage<B extends { x: number; y: number }>(b: B, canvas: { left: number; top: number }, scrollTop: number): B {
  return { ...b, x: canvas.left + b.x, y: canvas.top + b.y - scrollTop };
}

// The timeline's key table (keys.ts): what each key does, that typing and
// the browser's own shortcuts are left alone, and how a held key moves.
import { describe, expect, it } from 'vitest';
import { GESTURES, HOLD_DELAY_MS, heldMove, keyAction, keyLabel, SHORTCUTS, type KeyAction } from './keys.ts';

const press = (key: string, mods: { ctrlKey?: boolean; metaKey?: boolean; altKey?: boolean } = {}, target: unknown = null) =>
  keyAction({ key, ctrlKey: false, metaKey: false, altKey: false, ...mods, target: target as EventTarget | null });

describe('keyAction', () => {
  it('maps the Perfetto and Nsight Systems keys', () => {
    const want: [string, KeyAction][] = [
      ['w', 'zoom-in'],
      ['W', 'zoom-in'], // with Shift, or Caps Lock
      ['ArrowUp', 'zoom-in'],
      ['+', 'zoom-in'],
      ['=', 'zoom-in'],
      ['s', 'zoom-out'],
      ['ArrowDown', 'zoom-out'],
      ['-', 'zoom-out'],
      ['a', 'pan-left'],
      ['ArrowLeft', 'pan-left'],
      ['d', 'pan-right'],
      ['ArrowRight', 'pan-right'],
      ['0', 'fit'],
      ['f', 'focus'],
      ['z', 'zoom-range'],
      ['Escape', 'clear'],
      ['?', 'help'],
    ];
    for (const [key, action] of want) expect(press(key), key).toBe(action);
    expect(press('q')).toBeNull();
    expect(press('Enter')).toBeNull();
  });

  it("leaves the browser's and the menu's shortcuts alone (Ctrl+0, Ctrl+W, Cmd+F, Alt+D)", () => {
    expect(press('0', { ctrlKey: true })).toBeNull();
    expect(press('w', { ctrlKey: true })).toBeNull();
    expect(press('f', { metaKey: true })).toBeNull();
    expect(press('d', { altKey: true })).toBeNull();
  });

  it('does nothing while typing in a field or an editable element', () => {
    for (const tagName of ['INPUT', 'TEXTAREA', 'SELECT']) expect(press('w', {}, { tagName, isContentEditable: false }), tagName).toBeNull();
    expect(press('w', {}, { tagName: 'DIV', isContentEditable: true })).toBeNull();
    expect(press('w', {}, { tagName: 'BUTTON', isContentEditable: false })).toBe('zoom-in');
  });

  it('each key has one action, and every action is on the sheet', () => {
    const keys = SHORTCUTS.flatMap((s) => s.keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(SHORTCUTS.every((s) => s.does.length > 0 && s.keys.length > 0)).toBe(true);
    expect(GESTURES.some((g) => g.gesture === 'Wheel')).toBe(true);
    expect(['ArrowLeft', 'Escape', 'w', '?'].map(keyLabel)).toEqual(['←', 'Esc', 'W', '?']);
  });
});

describe('heldMove', () => {
  it('nothing before the hold delay: the press made its own step', () => {
    expect(heldMove('pan-right', 0, HOLD_DELAY_MS)).toBe(0);
    expect(heldMove('zoom-in', 0, HOLD_DELAY_MS)).toBe(1);
  });
  it('moves the same over a second whatever the frame rate', () => {
    const over = (m: 'pan-left' | 'zoom-in', frame: number) => {
      let pan = 0;
      let zoom = 1;
      for (let t = 0; t < 1000; t += frame) {
        const v = heldMove(m, t, Math.min(1000, t + frame));
        if (m === 'zoom-in') zoom *= v;
        else pan += v;
      }
      return m === 'zoom-in' ? zoom : pan;
    };
    expect(over('pan-left', 1000 / 60)).toBeCloseTo(over('pan-left', 1000 / 144), 9);
    expect(over('zoom-in', 1000 / 60)).toBeCloseTo(over('zoom-in', 1000 / 30), 9);
  });
  it('opposite directions, and faster the longer the key is held', () => {
    expect(heldMove('pan-left', 200, 300)).toBe(-heldMove('pan-right', 200, 300));
    expect(heldMove('zoom-in', 200, 300) * heldMove('zoom-out', 200, 300)).toBeCloseTo(1, 12);
    expect(heldMove('pan-right', 2000, 2100)).toBeGreaterThan(heldMove('pan-right', 200, 300));
    expect(heldMove('zoom-in', 2000, 2100)).toBeLessThan(heldMove('zoom-in', 200, 300));
    // The speed-up stops growing: a very long hold stays controllable.
    expect(heldMove('pan-right', 60_000, 60_100)).toBeCloseTo(heldMove('pan-right', 30_000, 30_100), 12);
  });
});

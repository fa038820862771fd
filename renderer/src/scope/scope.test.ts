// The scope's text form (URL and keys) and the order answers are shown in.
import { describe, expect, it } from 'vitest';
import type { Scope } from '../../../profiler/contract/api.ts';
import { AnswerOrder } from './scoped-answer.ts';
import { parseScope, sameScope, scopeKey, scopeTitle, windowScope } from './scope.ts';

describe('scope keys', () => {
  it('read back what they write', () => {
    const scopes: Scope[] = [
      { kind: 'steady-state' },
      { kind: 'whole' },
      { kind: 'range', name: 'step' },
      { kind: 'range', name: 'train step', instance: 3 },
      { kind: 'window', startNs: 336_155_534, endNs: 552_261_519 },
      { kind: 'window', startNs: -2000, endNs: 15 },
    ];
    for (const s of scopes) expect(parseScope(scopeKey(s))).toEqual(s);
    expect(scopeKey({ kind: 'range', name: 'step', instance: 3 })).toBe('range:step#3');
    expect(scopeKey({ kind: 'window', startNs: 10, endNs: 20 })).toBe('window:10..20');
  });

  it('anything unreadable is the steady state (the default)', () => {
    for (const t of [undefined, null, '', 'steady', 'nonsense', 'window:5..5', 'window:9..3x', 'range:']) {
      expect(parseScope(t)).toEqual({ kind: 'steady-state' });
    }
    // A window given backwards is the same window.
    expect(parseScope('window:20..10')).toEqual({ kind: 'window', startNs: 10, endNs: 20 });
    // Instances count from 1: "#0" is part of the name.
    expect(parseScope('range:step#0')).toEqual({ kind: 'range', name: 'step#0' });
  });

  it('windows are whole nanoseconds, in order, and never empty', () => {
    expect(windowScope(20.6, 10.2)).toEqual({ kind: 'window', startNs: 10, endNs: 21 });
    expect(windowScope(10.2, 10.4)).toBeNull();
    expect(sameScope({ kind: 'window', startNs: 1, endNs: 2 }, windowScope(2, 1)!)).toBe(true);
  });

  it('titles for the picker', () => {
    expect(scopeTitle({ kind: 'range', name: 'step', instance: 3 })).toBe('step #3');
    expect(scopeTitle({ kind: 'window', startNs: 0, endNs: 12_500_000 })).toBe('Selection · 12.5 ms');
  });
});

describe('answer order', () => {
  it('an answer older than the one shown is dropped; a newer one is taken even if not the last asked', () => {
    const o = new AnswerOrder();
    const [a, b, c] = [o.ask(), o.ask(), o.ask()];
    expect(o.take(b)).toBe(true);
    expect(o.take(a)).toBe(false);
    expect(o.isLast(b)).toBe(false);
    expect(o.isLast(c)).toBe(true);
    expect(o.take(c)).toBe(true);
    expect(o.take(b)).toBe(false);
  });
});

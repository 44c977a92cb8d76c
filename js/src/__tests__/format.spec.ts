/**
 * The formatting rules, against the cases that the Python side checks too
 * (tests/data/display_cases.json, tests/test_display.py): one definition in
 * two languages.
 */

import { describe, expect, it } from 'vitest';

import { COLORS, LABELS } from '../colors';
import { fmtBytes, fmtPct, fmtSI, fmtTime, fmtX, sig } from '../format';
import { amdahl } from '../views/whatif';
import { readJson } from './fixtures';

const cases = readJson('display_cases.json');

describe('the formatting shared with Python', () => {
  it('writes numbers with 3 significant digits as Python does', () => {
    for (const [x, want] of cases.sig) {
      expect([x, sig(x ?? NaN)]).toEqual([x, want]);
    }
  });

  it('writes times as Python does', () => {
    for (const [x, want] of cases.seconds) {
      expect([x, fmtTime(x)]).toEqual([x, want]);
    }
  });

  it('writes quantities with SI prefixes as Python does', () => {
    for (const [x, unit, want] of cases.quantity) {
      expect([x, unit, fmtSI(x, unit)]).toEqual([x, unit, want]);
    }
  });

  it('writes bytes in decimal units as Python does', () => {
    for (const [x, want] of cases.bytes) {
      expect([x, fmtBytes(x)]).toEqual([x, want]);
    }
  });

  it("computes Amdahl's law as analysis.amdahl does", () => {
    for (const [p, n, speedup, limit] of cases.amdahl) {
      const r = amdahl(1, p, n);
      expect(r.speedup).toBeCloseTo(speedup, 12);
      expect(r.span).toBeCloseTo(1 / speedup, 12);
      if (limit === null) {
        expect(r.limit).toBe(Infinity);
      } else {
        expect(r.limit).toBeCloseTo(limit, 12);
      }
    }
  });
});

describe('the style shared with Python', () => {
  it('has the colours and labels of views/style.py', () => {
    expect(COLORS).toEqual(cases.style.colours);
    expect(LABELS).toEqual(cases.style.labels);
  });
});

describe('the browser-only formatting', () => {
  it('writes shares and factors', () => {
    expect(fmtPct(0.123)).toBe('12.3%');
    expect(fmtPct(0.0004)).toBe('<0.1%');
    expect(fmtPct(null)).toBe('\u2014');
    expect(fmtX(2.345)).toBe('2.35\u00d7');
  });
});

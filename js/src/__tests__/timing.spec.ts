/**
 * The span card's line on the timed runs: its width is the interquartile
 * range from four runs on, and the extremes below that (their quartiles are
 * interpolated), never the extremes called the IQR.
 */

import { describe, expect, it } from 'vitest';

import type { ISummary, ITiming } from '../schema';
import { timingDetail } from '../views/overview';

function summary(timing: Partial<ITiming>): ISummary {
  const t: ITiming = {
    protocol: 'sustained',
    warmup_runs: 3,
    warmup_s: 0.1,
    timed_runs: 5,
    min_s: 767e-6,
    q1_s: 800e-6,
    median_s: 900e-6,
    q3_s: 1.1e-3,
    max_s: 3.03e-3,
    spread: 0.333,
    sm_clock_mhz: [],
    power_w: [],
    sensors: null,
    findings: [],
    host_slowdown: null,
    ...timing
  } as ITiming;
  return { timing: t } as unknown as ISummary;
}

describe('the timed runs line', () => {
  it('quotes the quartiles as the IQR from four runs on', () => {
    const text = timingDetail(summary({})) ?? '';
    expect(text).toContain('min 767 \u00b5s, IQR 800 \u00b5s\u20131.1 ms');
    expect(text).not.toContain('3.03 ms');
  });

  it('quotes the extremes, not as an IQR, for fewer than four runs', () => {
    const text = timingDetail(summary({ timed_runs: 3 })) ?? '';
    expect(text).toContain('min 767 \u00b5s, max 3.03 ms');
    expect(text).not.toContain('IQR');
  });

  it('writes microseconds as \u00b5s', () => {
    const text = timingDetail(summary({ min_s: 5e-6 })) ?? '';
    expect(text).toContain('min 5 \u00b5s');
    expect(text).not.toMatch(/\dus\b| us\b/);
  });
});

/** The figures that ReportData derives from a report. */

import { describe, expect, it } from 'vitest';

import { opTime, ReportData, SPLIT_KEYS } from '../model';
import { parseReport } from '../schema';
import { readJson } from './fixtures';

function data(name: string): ReportData {
  return new ReportData(parseReport(readJson('reports', name)));
}

describe('ReportData', () => {
  it('splits the span into parts that add up to it', () => {
    const d = data('small.json');
    const s = d.report.summary;
    expect(d.span).toBe(s.span_s);
    const sum = SPLIT_KEYS.reduce((a, k) => a + (d.splitTime(k) ?? 0), 0);
    expect(sum).toBeCloseTo(s.span_s!, 9);
    for (const k of SPLIT_KEYS) {
      const share = d.splitShare(k)!;
      expect(share).toBeGreaterThanOrEqual(0);
      expect(share).toBeLessThanOrEqual(1);
    }
    expect(d.busyShare).toBeCloseTo(s.busy_s! / s.span_s!, 12);
  });

  it('places on the roofline only ops with FLOPs, bytes and GPU time', () => {
    const d = data('small.json');
    expect(d.roofOps.length).toBeGreaterThan(0);
    for (const o of d.roofOps) {
      expect(o.flops! > 0 && o.bytes! > 0 && o.gpu_time_s! > 0).toBe(true);
    }
    const left = d.ops.filter(o => !d.roofOps.includes(o));
    expect(
      left.every(o => !(o.flops! > 0 && o.bytes! > 0 && o.gpu_time_s! > 0))
    ).toBe(true);
  });

  it('takes the geometry and main dtype from the report when it carries them', () => {
    const doc = readJson('reports', 'small_v2.json');
    const d = new ReportData(parseReport(doc));
    expect(d.mainDtype).toBe(doc.display.main_dtype);
    expect(d.roofline!.y_range).toEqual(doc.display.roofline.y_range);
  });

  it('reads a report of the previous version without the display specs', () => {
    // small.json is version 1 (no "display"); small_v2.json is the same report as Python
    // writes it today. The browser draws what the tables hold and leaves the geometry to
    // Python (python -m jupyter_brrr upgrade).
    const v1 = data('small.json');
    const v2 = data('small_v2.json');
    expect(v1.report.version).toBe(1);
    expect(v1.olderVersion).toBe(true);
    expect(v2.olderVersion).toBe(false);
    expect(v1.mainDtype).toBeNull();
    expect(v1.roofline).toBeNull();
    expect(v1.roofOps).toEqual(v2.roofOps);
    expect(v1.span).toBe(v2.span);
  });

  it('knows a report without GPU work', () => {
    const d = data('cpu_only.json');
    expect(d.cpuOnly).toBe(true);
    expect(d.roofline).toBeNull();
    expect(d.opCpuTime).toBeGreaterThan(0);
    const o = d.ops[0];
    expect(opTime(o, true)).toBe(o.self_cpu_time_s ?? o.cpu_time_s ?? 0);
  });

  it('knows an empty report', () => {
    const d = data('empty.json');
    expect(d.empty).toBe(true);
    expect(d.noGpuWork).toBe(true);
  });
});

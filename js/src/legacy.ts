/**
 * Reports of schema version 1 carry no display specs (`display` in the
 * report JSON, computed once in Python by jupyter_brrr/display.py since
 * version 2). These functions stand in for it when such a report is opened,
 * so that older saved notebooks still show every view. They follow the rules
 * of display.py; nothing written today goes through them.
 */

import { fmtSI, sig } from './format';
import type { IOpRow, IPeaks, IRooflineSpec } from './schema';

/** The dtype (roof) of most of the modelled FLOPs that ran on the GPU. */
export function legacyMainDtype(
  ops: IOpRow[],
  peaks: IPeaks | null
): string | null {
  const flops = peaks?.flops ?? {};
  const byDtype = new Map<string, number>();
  for (const o of ops) {
    const roof = o.roof || o.dtype;
    if (
      roof &&
      roof in flops &&
      (o.flops ?? 0) > 0 &&
      (o.gpu_time_s ?? 0) > 0
    ) {
      byDtype.set(roof, (byDtype.get(roof) ?? 0) + (o.flops ?? 0));
    }
  }
  let best: string | null = null;
  let bestFlops = -1;
  for (const [d, f] of byDtype) {
    if (f > bestFlops) {
      best = d;
      bestFlops = f;
    }
  }
  return best;
}

/** The roofline's geometry from the placed ops (ReportData.roofOps) and the peaks. */
export function legacyRoofline(
  pts: IOpRow[],
  peaks: IPeaks | null
): IRooflineSpec {
  const bw = peaks?.bandwidth && peaks.bandwidth > 0 ? peaks.bandwidth : null;
  const groups: { peak: number; dtypes: string[] }[] = [];
  for (const [dtype, peak] of Object.entries(peaks?.flops ?? {}).sort(
    (a, b) => b[1] - a[1]
  )) {
    if (!(peak > 0)) {
      continue;
    }
    const same = groups.find(r => r.peak === peak);
    if (same) {
      same.dtypes.push(dtype);
    } else {
      groups.push({ peak, dtypes: [dtype] });
    }
  }
  // In name order, as display.py has them (the peaks may list them in any order).
  groups.forEach(g => g.dtypes.sort());
  const xs = pts.map(o => o.flops! / o.bytes!);
  const ys = pts.map(o => o.flops! / o.gpu_time_s!);
  for (const g of groups) {
    ys.push(g.peak);
    if (bw) {
      xs.push(g.peak / bw);
    }
  }
  let xmin = xs.length ? Math.min(...xs) / 4 : 0.01;
  const xmax = xs.length ? Math.max(...xs) * 6 : 1e4;
  const ymax = ys.length ? Math.max(...ys) * 4 : 1e15;
  let ymin = ys.length ? Math.min(...ys) / 4 : ymax / 1e6;
  if (bw) {
    ymin = Math.min(ymin, bw * xmin * 2);
  }
  ymin = Math.max(ymin, ymax / 1e7 / 1.5);
  xmin = Math.max(xmin, 1e-12);
  const used = new Set(pts.map(o => o.roof || o.dtype));
  const anyUsed = groups.some(g => g.dtypes.some(d => used.has(d)));
  return {
    x_range: [xmin, xmax],
    y_range: [ymin, ymax],
    bandwidth:
      bw && groups.length
        ? {
            bytes_per_s: bw,
            x: [xmin, groups[0].peak / bw],
            y: [bw * xmin, groups[0].peak],
            label: `memory ${fmtSI(bw, 'B/s')}`
          }
        : null,
    ceilings: groups.map((g, k) => {
      const ridge = bw ? g.peak / bw : null;
      return {
        flops_per_s: g.peak,
        dtypes: g.dtypes,
        ridge,
        x: [ridge ?? xmin, xmax],
        label:
          `${g.dtypes.join(', ')} ${fmtSI(g.peak, 'FLOP/s')}` +
          (ridge !== null ? ` (ridge ${sig(ridge)} FLOP/B)` : ''),
        used: anyUsed ? g.dtypes.some(d => used.has(d)) : k === 0
      };
    })
  };
}

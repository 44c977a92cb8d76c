/**
 * The BokehJS charts of the report, built from report data with the BokehJS
 * API (never from code or HTML strings). This module is loaded lazily, so a
 * JupyterLab page pays for BokehJS only when a report opens a chart view.
 *
 * Safety: strings from the report reach Bokeh only as categorical factors
 * and glyph text (drawn on a canvas as text), and hover tooltips are DOM
 * nodes built here with textContent. Axis labels and titles, which Bokeh
 * parses for TeX delimiters, are constants.
 */

// Only the parts of BokehJS that these charts use: the plotting API and the
// model classes (no widgets, tables or bundled MathJax).
import '@bokeh/bokehjs/build/js/lib/models/main';
import * as Plotting from '@bokeh/bokehjs/build/js/lib/api/plotting';
import {
  FactorRange,
  FixedTicker,
  HoverTool,
  Legend,
  LegendItem
} from '@bokeh/bokehjs/build/js/lib/models';

const Bokeh = {
  Plotting,
  FactorRange,
  FixedTicker,
  HoverTool,
  Legend,
  LegendItem
};

import { boundColor, boundKey, BOUNDS, COLORS, LABELS } from './colors';
import { h } from './dom';
import { ellipsize, fmtPct, fmtSI, fmtTime, sig } from './format';
import type { ICpuOpRow, IKernelRow, IOpRow, IRooflineSpec } from './schema';

type Figure = ReturnType<typeof Bokeh.Plotting.figure>;
type View = { remove(): void };

/** Colours taken from the JupyterLab theme when a chart is drawn. */
export interface IChartTheme {
  /** Main text colour. */
  fg: string;
  /** Secondary text colour. */
  fg2: string;
  /** Border and axis colour. */
  border: string;
  /** Grid line colour. */
  grid: string;
  /** Font family. */
  font: string;
  /** Background colour. */
  bg: string;
}

/** What a drawn chart leaves behind: call remove() to free its views. */
export interface IChartHandle {
  /** Remove the Bokeh views and free their resources. */
  remove(): void;
}

/** JupyterLab's theme colours as they are now where a chart is drawn (under ``node``). */
export function themeOf(node: HTMLElement): IChartTheme {
  const cs = getComputedStyle(node);
  const v = (name: string, fallback: string) =>
    cs.getPropertyValue(name).trim() || fallback;
  return {
    fg: v('--jp-ui-font-color1', '#333'),
    fg2: v('--jp-ui-font-color2', '#666'),
    border: v('--jp-border-color1', '#bbb'),
    grid: v('--jp-border-color2', '#ddd'),
    font: v('--jp-ui-font-family', 'sans-serif'),
    bg: v('--jp-layout-color0', '#fff')
  };
}

export function style(fig: Figure, t: IChartTheme): void {
  fig.background_fill_alpha = 0;
  fig.border_fill_alpha = 0;
  fig.outline_line_color = t.border;
  fig.outline_line_alpha = 0.6;
  fig.min_border_left = 8;
  fig.min_border_right = 16;
  fig.toolbar.logo = null;
  for (const ax of fig.axes) {
    ax.axis_line_color = t.border;
    ax.major_tick_line_color = t.border;
    ax.minor_tick_line_color = t.border;
    ax.major_label_text_color = t.fg2;
    ax.major_label_text_font = t.font;
    ax.major_label_text_font_size = '11px';
    ax.axis_label_text_color = t.fg;
    ax.axis_label_text_font = t.font;
    ax.axis_label_text_font_style = 'normal';
    ax.axis_label_text_font_size = '12px';
  }
  for (const g of fig.grids) {
    g.grid_line_color = t.grid;
    g.grid_line_alpha = 0.6;
  }
}

export function styleLegend(legend: Legend, t: IChartTheme): void {
  legend.background_fill_color = t.bg;
  legend.background_fill_alpha = 0.75;
  legend.border_line_alpha = 0;
  legend.label_text_color = t.fg;
  legend.label_text_font = t.font;
  legend.label_text_font_size = '11px';
  legend.glyph_height = 12;
  legend.glyph_width = 12;
  legend.spacing = 2;
  legend.padding = 4;
}

/** A tooltip body: rows of label / value, all set as text. */
export function tip(title: string, rows: [string, string][]): HTMLElement {
  const el = h('div', { class: 'jp-brrr-tip' });
  el.appendChild(h('div', { class: 'jp-brrr-tip-title' }, title));
  const table = h('table');
  for (const [k, v] of rows) {
    table.appendChild(h('tr', null, h('th', null, k), h('td', null, v)));
  }
  el.appendChild(table);
  return el;
}

export function hoverTool(
  renderers: any[],
  render: (i: number) => HTMLElement,
  extra: object = {}
): any {
  return new Bokeh.HoverTool({
    renderers,
    tooltips: ((_source: unknown, vars: { index: number | null }) => {
      const i = vars.index;
      return typeof i === 'number' ? render(i) : h('div');
    }) as any,
    ...extra
  });
}

export async function showIn(
  fig: Figure,
  target: HTMLElement,
  onView?: (view: any) => void
): Promise<IChartHandle> {
  const view = (await Bokeh.Plotting.show(fig, target)) as unknown as View;
  onView?.(view);
  return {
    remove: () => {
      try {
        view.remove();
      } catch {
        // already gone
      }
    }
  };
}

/* ------------------------------------------------------------------ */
/* Operators: top groups by time, stacked by bound                      */
/* ------------------------------------------------------------------ */

/** One bar of the top-ops chart. */
export interface IBarGroup {
  /** Group name (op, category or module). */
  name: string;
  /** Time per bound. */
  byBound: { [bound: string]: number };
  /** Total time. */
  total: number;
  /** Calls or op rows in the group. */
  count: number;
}

/** Draw horizontal bars of the groups, largest on top, stacked by bound. */
export async function drawOpBars(
  target: HTMLElement,
  groups: IBarGroup[],
  totalTime: number,
  metricLabel: string,
  t: IChartTheme
): Promise<IChartHandle> {
  // Unique, shortened factors: the full name is in the tooltip.
  const seen = new Map<string, number>();
  const labels = groups.map(g => {
    let label = ellipsize(g.name || '(none)', 44);
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    if (n > 1) {
      label = `${label} #${n}`;
    }
    return label;
  });
  const factors = [...labels].reverse();
  const fig = Bokeh.Plotting.figure({
    y_range: new Bokeh.FactorRange({ factors }),
    height: Math.max(140, 26 + groups.length * 22 + 40),
    sizing_mode: 'stretch_width',
    x_axis_label: metricLabel,
    tools: 'xwheel_zoom,xpan,reset',
    toolbar_location: 'right'
  });
  const renderers: any[] = [];
  const left = new Array(groups.length).fill(0);
  for (const b of BOUNDS) {
    const right: number[] = [];
    const lefts: number[] = [];
    let any = false;
    groups.forEach((g, i) => {
      const v = g.byBound[b] ?? 0;
      if (v > 0) {
        any = true;
      }
      lefts.push(left[i] * 1e3);
      left[i] += v;
      right.push(left[i] * 1e3);
    });
    if (!any) {
      continue;
    }
    const r = fig.hbar({
      y: labels,
      left: lefts,
      right,
      height: 0.72,
      fill_color: boundColor(b),
      line_color: null,
      hover_fill_alpha: 1,
      fill_alpha: 0.9
    });
    renderers.push(r);
  }
  fig.add_tools(
    hoverTool(renderers, i => {
      const g = groups[i];
      const rows: [string, string][] = [
        ['time', fmtTime(g.total)],
        ['share', fmtPct(totalTime > 0 ? g.total / totalTime : null)],
        ['op rows', String(g.count)]
      ];
      for (const b of BOUNDS) {
        const v = g.byBound[b];
        if (v) {
          rows.push([LABELS[b] ?? b, fmtTime(v)]);
        }
      }
      return tip(g.name || '(none)', rows);
    })
  );
  style(fig, t);
  fig.yaxis.major_label_text_font_size = '11px';
  fig.ygrid.grid_line_alpha = 0;
  fig.x_range.start = 0;
  return showIn(fig, target);
}

/* ------------------------------------------------------------------ */
/* Roofline                                                             */
/* ------------------------------------------------------------------ */

/** A plotted point in data coordinates, for the test hook. */
interface IPlotPoint {
  name: string;
  x: number;
  y: number;
}

/**
 * Test hook: `el.jupyterBrrrPoints()` returns where each point is drawn, in
 * page (client) pixels, so that a browser test can hover one. Computed on
 * each call from the plot's current scales (after pan, zoom or resize too).
 */
function exposePoints(el: HTMLElement, view: any, points: IPlotPoint[]) {
  (el as any).jupyterBrrrPoints = () => {
    const frame = view.frame;
    const box = view.canvas.events_el.getBoundingClientRect();
    return points.map(p => ({
      name: p.name,
      x: box.left + frame.x_scale.compute(p.x),
      y: box.top + frame.y_scale.compute(p.y)
    }));
  };
}

/**
 * The roofline's ceilings, drawn on ``fig``: the bandwidth slope up to the
 * highest ridge, and one flat roof per peak; their legend items.
 */
function rooflineCeilings(
  fig: any,
  spec: IRooflineSpec,
  t: IChartTheme
): any[] {
  // Ceilings: the bandwidth slope up to the highest ridge, and one flat roof
  // per peak (dtypes with the same peak share a roof: "bf16, fp16"); those
  // the ops were held against are drawn strong. They are named in a legend
  // of their own, so labels never cover points.
  const ceilingItems: any[] = [];
  const bw = spec.bandwidth;
  if (bw) {
    const r = fig.line({
      x: bw.x,
      y: bw.y,
      line_color: t.fg2,
      line_width: 2
    });
    ceilingItems.push(
      new Bokeh.LegendItem({ label: { value: bw.label }, renderers: [r] })
    );
  }
  const dashes = ['dashed', 'dotted', 'dotdash', 'dashdot'] as const;
  let faint = 0;
  spec.ceilings.forEach(c => {
    const dash = c.used
      ? 'solid'
      : dashes[Math.min(faint++, dashes.length - 1)];
    const r = fig.line({
      x: c.x,
      y: [c.flops_per_s, c.flops_per_s],
      line_color: t.fg2,
      line_alpha: c.used ? 1 : 0.8,
      line_width: c.used ? 2 : 1.5,
      line_dash: dash
    });
    const renderers: any[] = [r];
    if (c.ridge !== null) {
      renderers.push(
        fig.scatter({
          x: [c.ridge],
          y: [c.flops_per_s],
          size: 7,
          marker: 'diamond',
          fill_color: t.fg2,
          line_color: null
        })
      );
    }
    ceilingItems.push(
      new Bokeh.LegendItem({ label: { value: c.label }, renderers })
    );
  });

  return ceilingItems;
}

/** An op's tooltip on the roofline. */
function rooflineTip(o: IOpRow): HTMLElement {
  const intensity = o.flops! / o.bytes!;
  const rate = o.flops! / o.gpu_time_s!;
  return tip(o.name, [
    ['shapes', o.shapes || '\u2014'],
    ['dtype', o.dtype || '\u2014'],
    ['GPU time', fmtTime(o.gpu_time_s)],
    ['calls', o.calls === null ? '\u2014' : String(o.calls)],
    ['FLOP/s', fmtSI(rate, 'FLOP/s')],
    ['bytes/s', fmtSI(o.bytes_per_s ?? o.bytes! / o.gpu_time_s!, 'B/s')],
    ['intensity', `${sig(intensity)} FLOP/B`],
    [
      'roof',
      o.roof
        ? `${o.roof}${o.roof_basis === 'assumed' ? ' (assumed)' : ''}`
        : '\u2014'
    ],
    [
      '% of roof',
      o.roof_flag ? `above its roof: ${o.roof_flag}` : fmtPct(o.roof_fraction)
    ],
    ['bound', o.bound]
  ]);
}

/**
 * Draw the roofline: the ceilings and axis ranges of `spec` (computed in
 * Python, display.roofline) and one point per op row. `pts` are
 * ReportData.roofOps: FLOPs, bytes and GPU time all positive.
 */
export async function drawRoofline(
  target: HTMLElement,
  pts: IOpRow[],
  spec: IRooflineSpec,
  t: IChartTheme
): Promise<IChartHandle> {
  const intensity = (o: IOpRow) => o.flops! / o.bytes!;
  const rate = (o: IOpRow) => o.flops! / o.gpu_time_s!;

  const fig = Bokeh.Plotting.figure({
    x_axis_type: 'log',
    y_axis_type: 'log',
    x_range: spec.x_range,
    y_range: spec.y_range,
    height: 420,
    sizing_mode: 'stretch_width',
    x_axis_label: 'Arithmetic intensity (FLOP / byte)',
    y_axis_label: 'Achieved FLOP/s',
    tools: 'pan,wheel_zoom,box_zoom,reset,save',
    toolbar_location: 'right'
  });

  const ceilingItems = rooflineCeilings(fig, spec, t);

  // Points: one renderer per bound so the legend names the colours.
  const tmax = Math.max(...pts.map(o => o.gpu_time_s!), 0);
  const groups = new Map<string, IOpRow[]>();
  for (const o of pts) {
    const key = boundKey(o.bound);
    const list = groups.get(key) ?? [];
    list.push(o);
    groups.set(key, list);
  }
  const renderers: any[] = [];
  const rows: IOpRow[][] = [];
  for (const [bound, list] of groups) {
    const r = fig.scatter({
      x: list.map(intensity),
      y: list.map(rate),
      size: list.map(o => 7 + 26 * Math.sqrt(o.gpu_time_s! / (tmax || 1))),
      fill_color: boundColor(bound),
      // Hollow: above its roof, a model or peak mismatch rather than an achievement.
      fill_alpha: list.map(o => (o.roof_flag ? 0 : 0.65)),
      line_color: boundColor(bound),
      line_alpha: 1,
      hover_fill_alpha: 1,
      legend_label: LABELS[bound] ?? bound
    });
    renderers.push(r);
    rows.push(list);
  }
  renderers.forEach((r, k) => {
    fig.add_tools(
      hoverTool([r], i => {
        return rooflineTip(rows[k][i]);
      })
    );
  });
  style(fig, t);
  styleLegend(fig.legend, t);
  fig.legend.location = 'top_left';
  fig.legend.title = 'bound';
  fig.legend.title_text_color = t.fg2;
  fig.legend.title_text_font_style = 'normal';
  if (ceilingItems.length) {
    const ceilings = new Bokeh.Legend({
      items: ceilingItems,
      location: 'bottom_right',
      title: 'ceilings',
      title_text_color: t.fg2,
      title_text_font_style: 'normal',
      click_policy: 'hide'
    });
    styleLegend(ceilings, t);
    ceilings.glyph_width = 24; // wide enough to show the dash patterns
    fig.add_layout(ceilings);
  }
  return showIn(fig, target, view =>
    exposePoints(
      target,
      view,
      pts.map(o => ({ name: o.name, x: intensity(o), y: rate(o) }))
    )
  );
}

/* ------------------------------------------------------------------ */
/* Timeline                                                             */
/* ------------------------------------------------------------------ */

/** Options of the timeline. */
export interface ITimelineData {
  /** Kernels with a start time. */
  kernels: IKernelRow[];
  /** CPU ops with a start time. */
  cpuOps: ICpuOpRow[];
  /** Span of one run (for the idle gaps at the ends). */
  span: number | null;
}

export function timeUnit(span: number): { scale: number; label: string } {
  if (span >= 1) {
    return { scale: 1, label: 's' };
  }
  if (span >= 1e-3) {
    return { scale: 1e3, label: 'ms' };
  }
  return { scale: 1e6, label: '\u00b5s' };
}

/** Idle intervals: the complement of the union of kernel intervals in [0, end]. */
export function idleGaps(
  kernels: IKernelRow[],
  end: number
): [number, number][] {
  const iv = kernels
    .filter(k => k.start_s !== null && k.dur_s !== null)
    .map(k => [k.start_s!, k.start_s! + Math.max(0, k.dur_s!)])
    .sort((a, b) => a[0] - b[0]);
  const gaps: [number, number][] = [];
  let cur = 0;
  for (const [s, e] of iv) {
    if (s > cur) {
      gaps.push([cur, s]);
    }
    cur = Math.max(cur, e);
  }
  if (end > cur) {
    gaps.push([cur, end]);
  }
  return gaps;
}

/** A lane of the timeline: its label and its extent down the y axis. */
interface ILane {
  label: string;
  y0: number;
  y1: number;
}

/** The space between two lanes of the timeline. */
const TIMELINE_LANE_GAP = 0.25;

/**
 * The CPU ops' boxes, one lane per thread with its ops nested (at most 4
 * deep), from the top of the timeline: their lanes are added to ``lanes``;
 * ``y`` is where the next lane starts.
 */
function cpuLanes(
  cpuOps: ICpuOpRow[],
  sc: number,
  lanes: ILane[]
): {
  left: number[];
  right: number[];
  top: number[];
  bottom: number[];
  rows: ICpuOpRow[];
  y: number;
} {
  const laneGap = TIMELINE_LANE_GAP;
  let y = 0;
  const byTid = new Map<string, ICpuOpRow[]>();
  for (const c of cpuOps) {
    const list = byTid.get(c.tid) ?? [];
    list.push(c);
    byTid.set(c.tid, list);
  }
  const MAX_DEPTH = 4;
  const cpu = {
    left: [] as number[],
    right: [] as number[],
    top: [] as number[],
    bottom: [] as number[],
    rows: [] as ICpuOpRow[]
  };
  for (const [tid, list] of byTid) {
    list.sort(
      (a, b) => a.start_s! - b.start_s! || (b.dur_s ?? 0) - (a.dur_s ?? 0)
    );
    const stack: number[] = [];
    let maxDepth = 0;
    const depths: number[] = [];
    for (const c of list) {
      const s = c.start_s!;
      while (stack.length && stack[stack.length - 1] <= s) {
        stack.pop();
      }
      const d = Math.min(stack.length, MAX_DEPTH - 1);
      depths.push(d);
      maxDepth = Math.max(maxDepth, d + 1);
      stack.push(s + (c.dur_s ?? 0));
    }
    const laneTop = y;
    const rowH = 0.5;
    list.forEach((c, i) => {
      const d = depths[i];
      cpu.left.push(c.start_s! * sc);
      cpu.right.push((c.start_s! + (c.dur_s ?? 0)) * sc);
      cpu.top.push(-(laneTop + d * rowH + 0.04));
      cpu.bottom.push(-(laneTop + (d + 1) * rowH - 0.04));
      cpu.rows.push(c);
    });
    const h0 = maxDepth * rowH;
    lanes.push({ label: `CPU thread ${safeLabel(tid)}`, y0: y, y1: y + h0 });
    y += h0 + laneGap;
  }

  return { ...cpu, y };
}

/**
 * One lane per CUDA stream, from ``y`` down, added to ``lanes``: each with
 * its kernels; ``y`` is where the next lane would start.
 */
function kernelLanes(
  kernels: IKernelRow[],
  lanes: ILane[],
  y: number
): { lanes: [ILane, IKernelRow[]][]; y: number } {
  const laneGap = TIMELINE_LANE_GAP;
  const streams = new Map<string, IKernelRow[]>();
  for (const k of kernels) {
    const list = streams.get(k.stream) ?? [];
    list.push(k);
    streams.set(k.stream, list);
  }
  const streamLanes: [ILane, IKernelRow[]][] = [];
  const streamIds = [...streams.keys()].sort(
    (a, b) => Number(a) - Number(b) || a.localeCompare(b)
  );
  for (const s of streamIds) {
    const lane = { label: `stream ${safeLabel(s)}`, y0: y, y1: y + 1 };
    lanes.push(lane);
    streamLanes.push([lane, streams.get(s)!]);
    y += 1 + laneGap;
  }

  return { lanes: streamLanes, y };
}

/** A kernel's tooltip on the timeline. */
function kernelTip(k: IKernelRow): HTMLElement {
  const rows: [string, string][] = [
    ['op', k.op || '\u2014'],
    ...(k.module ? [['module', k.module] as [string, string]] : []),
    ['stream', k.stream],
    ['start', fmtTime(k.start_s)],
    ['duration', fmtTime(k.dur_s)],
    ['bound', k.bound]
  ];
  if (k.count !== null && k.count !== 1) {
    rows.push(['launches', String(k.count)]);
  }
  if (k.flops) {
    rows.push(['FLOPs', fmtSI(k.flops, 'FLOP')]);
  }
  if (k.bytes) {
    rows.push(['bytes', fmtSI(k.bytes, 'B')]);
  }
  return tip(ellipsize(k.name, 160), rows);
}

/** Draw kernels per stream, idle gaps and CPU ops over time. */
export async function drawTimeline(
  target: HTMLElement,
  data: ITimelineData,
  t: IChartTheme
): Promise<IChartHandle> {
  const { kernels, cpuOps } = data;
  let end = data.span ?? 0;
  for (const k of kernels) {
    end = Math.max(end, k.start_s! + (k.dur_s ?? 0));
  }
  for (const c of cpuOps) {
    end = Math.max(end, c.start_s! + (c.dur_s ?? 0));
  }
  let start = 0;
  for (const c of cpuOps) {
    start = Math.min(start, c.start_s!);
  }
  const unit = timeUnit(Math.max(end - start, 1e-9));
  const sc = unit.scale;

  // Lanes from the top: CPU threads (with nesting depth), GPU idle, streams.
  const lanes: ILane[] = [];
  const laneGap = TIMELINE_LANE_GAP;
  const cpu = cpuLanes(cpuOps, sc, lanes);
  let y = cpu.y;

  const gaps = kernels.length ? idleGaps(kernels, end) : [];
  let gapLane: ILane | null = null;
  if (kernels.length) {
    gapLane = { label: 'GPU idle', y0: y, y1: y + 0.5 };
    lanes.push(gapLane);
    y += 0.5 + laneGap;
  }

  const streamLanes = kernelLanes(kernels, lanes, y);
  y = streamLanes.y;

  const fig = Bokeh.Plotting.figure({
    height: Math.min(640, Math.max(180, 60 + y * 48)),
    sizing_mode: 'stretch_width',
    x_axis_label: `Time (${unit.label})`,
    x_range: [start * sc, end * sc],
    y_range: [-(y - laneGap) - 0.1, 0.1],
    tools: 'xpan,xwheel_zoom,xbox_zoom,reset,save',
    active_drag: 'xpan',
    active_scroll: 'xwheel_zoom',
    toolbar_location: 'right'
  });

  const renderers: [any, (i: number) => HTMLElement][] = [];
  if (cpu.rows.length) {
    const r = fig.quad({
      left: cpu.left,
      right: cpu.right,
      top: cpu.top,
      bottom: cpu.bottom,
      fill_color: COLORS.cpu,
      fill_alpha: 0.55,
      line_color: COLORS.cpu,
      line_alpha: 0.9,
      line_width: 0.5
    });
    renderers.push([
      r,
      i => {
        const c = cpu.rows[i];
        return tip(c.name, [
          ['thread', c.tid],
          ['start', fmtTime(c.start_s)],
          ['duration', fmtTime(c.dur_s)]
        ]);
      }
    ]);
  }
  if (gapLane && gaps.length) {
    const r = fig.quad({
      left: gaps.map(g => g[0] * sc),
      right: gaps.map(g => g[1] * sc),
      top: gaps.map(() => -gapLane!.y0),
      bottom: gaps.map(() => -gapLane!.y1),
      fill_color: COLORS.idle,
      fill_alpha: 0.75,
      line_color: null
    });
    renderers.push([
      r,
      i =>
        tip('GPU idle', [
          ['from', fmtTime(gaps[i][0])],
          ['to', fmtTime(gaps[i][1])],
          ['length', fmtTime(gaps[i][1] - gaps[i][0])]
        ])
    ]);
  }
  for (const [lane, list] of streamLanes.lanes) {
    const n = list.length;
    const left: number[] = new Array(n);
    const right: number[] = new Array(n);
    const colors: string[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const k = list[i];
      left[i] = k.start_s! * sc;
      right[i] = (k.start_s! + (k.dur_s ?? 0)) * sc;
      colors[i] = boundColor(k.bound);
    }
    const top: number[] = new Array(n).fill(-(lane.y0 + 0.08));
    const bottom: number[] = new Array(n).fill(-(lane.y1 - 0.08));
    const r = fig.quad({
      left,
      right,
      top,
      bottom,
      fill_color: colors,
      line_color: colors,
      line_width: 0.6,
      fill_alpha: 0.9,
      hover_fill_alpha: 1
    });
    renderers.push([r, i => kernelTip(list[i])]);
  }
  for (const [r, render] of renderers) {
    fig.add_tools(
      hoverTool([r], render, {
        point_policy: 'follow_mouse',
        attachment: 'below'
      })
    );
  }
  style(fig, t);
  laneLabels(fig, lanes);
  return showIn(fig, target);
}

/** Lane labels as y ticks (labels are built from numbers and constants). */
function laneLabels(fig: any, lanes: ILane[]): void {
  const ticks = lanes.map(l => -(l.y0 + l.y1) / 2);
  const overrides = new Map<number, string>();
  lanes.forEach((l, i) => overrides.set(ticks[i], l.label));
  fig.yaxis.ticker = new Bokeh.FixedTicker({ ticks, minor_ticks: [] });
  fig.yaxis.major_label_overrides = overrides;
  fig.yaxis.major_tick_line_color = null;
  fig.ygrid.grid_line_alpha = 0;
}

/** Labels that Bokeh parses for TeX delimiters: keep only safe characters. */
export function safeLabel(s: string): string {
  return s.replace(/[^A-Za-z0-9 _.:#-]/g, '').slice(0, 24) || '?';
}

/**
 * BokehJS charts of the re-measure loop and of a job's ranks: a named cell's
 * runs over time (the span and its split per run, against the target), and
 * one timeline lane per rank with the collectives highlighted. Loaded lazily
 * with BokehJS, like charts.ts, and built from report data only: strings from
 * a report reach Bokeh as glyph data and DOM tooltips set as text; axis
 * labels and tick labels are constants or built from numbers.
 */

import * as Plotting from '@bokeh/bokehjs/build/js/lib/api/plotting';
import { FixedTicker } from '@bokeh/bokehjs/build/js/lib/models';

import {
  hoverTool,
  IChartHandle,
  IChartTheme,
  showIn,
  style,
  timeUnit,
  tip
} from './charts';
import { COLORS, LABELS } from './colors';
import { fmtBytes, fmtPct, fmtTime, fmtX } from './format';
import { SPLIT_KEYS } from './model';
import type { IHistoryRun, IJobCallRow, IJobLaneRow } from './schema';

/** The parts of a run's span, bottom to top in the history's stacked bars. */
const RUN_PARTS = SPLIT_KEYS;

/** Where a drawn run is, in page pixels (a test hook, like jupyterBrrrPoints). */
export interface IRunPoint {
  /** The run number. */
  run: number;
  /** Its span per run. */
  span_s: number;
  /** Page x of its bar's centre. */
  x: number;
  /** Page y of its span's marker. */
  y: number;
}

/** The verdict against the run before, in words. */
export function versusText(r: IHistoryRun): string {
  if (!r.verdict) {
    return '\u2014';
  }
  if (r.verdict === 'faster' && r.speedup) {
    return `${fmtX(r.speedup)} faster`;
  }
  if (r.verdict === 'slower' && r.speedup) {
    return `${fmtX(1 / r.speedup)} slower`;
  }
  return r.verdict;
}

/**
 * Draw a named cell's runs: per run a bar of its span stacked by part, the
 * span as a line with a marker per run, and the goal as a dashed line.
 */
export async function drawHistory(
  target: HTMLElement,
  runs: IHistoryRun[],
  goalSpan: number | null,
  t: IChartTheme
): Promise<IChartHandle> {
  const spans = runs.map(r => r.span_s ?? 0);
  const top = Math.max(...spans, goalSpan ?? 0, 1e-12);
  const unit = timeUnit(top);
  const sc = unit.scale;
  const xs = runs.map((_r, i) => i);
  const fig = Plotting.figure({
    height: 260,
    sizing_mode: 'stretch_width',
    x_range: [-0.6, runs.length - 0.4],
    y_range: [0, top * sc * 1.12],
    y_axis_label: `Span per run (${unit.label})`,
    x_axis_label: 'Run',
    tools: 'xpan,xwheel_zoom,reset,save',
    toolbar_location: 'right'
  });
  const renderers: any[] = [];
  const bottom = new Array(runs.length).fill(0);
  for (const part of RUN_PARTS) {
    const values = runs.map(r => r[`${part}_s`] ?? 0);
    if (!values.some(v => v > 0)) {
      continue;
    }
    const bottoms = bottom.map(b => b * sc);
    values.forEach((v, i) => (bottom[i] += v));
    renderers.push(
      fig.vbar({
        x: xs,
        bottom: bottoms,
        top: bottom.map(b => b * sc),
        width: 0.6,
        fill_color: COLORS[part],
        fill_alpha: 0.85,
        line_color: null,
        hover_fill_alpha: 1
      })
    );
  }
  fig.line({
    x: xs,
    y: spans.map(s => s * sc),
    line_color: t.fg,
    line_width: 1.5
  });
  fig.scatter({
    x: xs,
    y: spans.map(s => s * sc),
    size: 8,
    marker: 'circle',
    fill_color: runs.map(r =>
      r.verdict === 'faster'
        ? '#2e7d32'
        : r.verdict === 'slower'
          ? '#c62828'
          : t.bg
    ),
    line_color: t.fg,
    line_width: 1.5
  });
  if (goalSpan !== null && goalSpan > 0) {
    fig.line({
      x: [-0.6, runs.length - 0.4],
      y: [goalSpan * sc, goalSpan * sc],
      line_color: '#2e7d32',
      line_dash: 'dashed',
      line_width: 1.5
    });
  }
  fig.add_tools(
    hoverTool(renderers, i => {
      const r = runs[i];
      const rows: [string, string][] = [
        ['when (UTC)', (r.created ?? '').slice(0, 19).replace('T', ' ')],
        ['span', fmtTime(r.span_s)],
        ['vs previous', versusText(r)]
      ];
      if (r.settings) {
        rows.push(['settings', r.settings]);
      }
      if (r.code_changed !== null) {
        rows.push(['code', r.code_changed ? 'changed' : 'same']);
      }
      for (const part of RUN_PARTS) {
        const v = r[`${part}_s`];
        if (v) {
          rows.push([
            LABELS[part] ?? part,
            `${fmtTime(v)} (${fmtPct(r.span_s ? v / r.span_s : null, 0)})`
          ]);
        }
      }
      if (goalSpan) {
        rows.push(['target', fmtTime(goalSpan)]);
      }
      return tip(`run ${r.run}`, rows);
    })
  );
  style(fig, t);
  const overrides = new Map<number, string>();
  runs.forEach((r, i) => overrides.set(i, `#${Math.round(r.run)}`));
  fig.xaxis.ticker = new FixedTicker({ ticks: xs, minor_ticks: [] });
  fig.xaxis.major_label_overrides = overrides;
  fig.xgrid.grid_line_alpha = 0;
  return showIn(fig, target, view => {
    (target as any).jupyterBrrrRuns = (): IRunPoint[] => {
      const frame = view.frame;
      const box = view.canvas.events_el.getBoundingClientRect();
      return runs.map((r, i) => ({
        run: r.run,
        span_s: spans[i],
        x: box.left + frame.x_scale.compute(i),
        y: box.top + frame.y_scale.compute(spans[i] * sc)
      }));
    };
  });
}

/** The lane parts of a rank's activity, in drawing order, with their colour key. */
const LANE_PARTS: [part: string, color: string, label: string][] = [
  ['compute', COLORS.compute, 'Compute'],
  ['memory', COLORS.memory, 'Memory'],
  ['other', COLORS.other, 'Other'],
  ['comm', COLORS.communication, 'Communication (hidden behind work)'],
  ['exposed', COLORS.communication, 'Communication (exposed)']
];

/** What a rank timeline draws. */
export interface IRankTimelineData {
  /** The ranks, in lane order (top first). */
  ranks: number[];
  /** Each rank's activity intervals. */
  lanes: IJobLaneRow[];
  /** Each rank's collective calls. */
  calls: IJobCallRow[];
  /** The straggler's rank, or null. */
  straggler: number | null;
}

/**
 * Draw one lane per rank on the job's aligned clock: the rank's own work in
 * the split's colours, communication in its colour (pale where hidden behind
 * work, solid where exposed), and each collective call outlined from the
 * rank's arrival to its end, so that a late rank stands out.
 */
export async function drawRankTimeline(
  target: HTMLElement,
  data: IRankTimelineData,
  t: IChartTheme
): Promise<IChartHandle> {
  const laneOf = new Map<number, number>();
  data.ranks.forEach((r, i) => laneOf.set(r, i));
  let start = Infinity;
  let end = -Infinity;
  for (const l of data.lanes) {
    start = Math.min(start, l.start_s);
    end = Math.max(end, l.end_s);
  }
  for (const c of data.calls) {
    for (const v of [c.arrival_s, c.start_s, c.end_s]) {
      if (v !== null) {
        start = Math.min(start, v);
        end = Math.max(end, v);
      }
    }
  }
  if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) {
    start = 0;
    end = 1e-3;
  }
  const unit = timeUnit(end - start);
  const sc = unit.scale;
  const n = data.ranks.length;
  const fig = Plotting.figure({
    height: Math.min(560, Math.max(160, 70 + n * 44)),
    sizing_mode: 'stretch_width',
    x_axis_label: `Time (${unit.label}), aligned on the collectives`,
    x_range: [start * sc, end * sc],
    y_range: [-n - 0.05, 0.05],
    tools: 'xpan,xwheel_zoom,xbox_zoom,reset,save',
    active_drag: 'xpan',
    active_scroll: 'xwheel_zoom',
    toolbar_location: 'right'
  });
  const hovers: [any, (i: number) => HTMLElement][] = [];
  for (const [part, color, label] of LANE_PARTS) {
    const rows = data.lanes.filter(l => l.part === part && laneOf.has(l.rank));
    if (!rows.length) {
      continue;
    }
    // Work fills the lane's upper part; communication its lower band.
    const comm = part === 'comm' || part === 'exposed';
    const r = fig.quad({
      left: rows.map(l => l.start_s * sc),
      right: rows.map(l => l.end_s * sc),
      top: rows.map(l => -(laneOf.get(l.rank)! + (comm ? 0.55 : 0.12))),
      bottom: rows.map(l => -(laneOf.get(l.rank)! + (comm ? 0.88 : 0.52))),
      fill_color: color,
      fill_alpha: part === 'comm' ? 0.3 : 0.9,
      line_color: null
    });
    hovers.push([
      r,
      i =>
        tip(label, [
          ['rank', String(rows[i].rank)],
          ['from', fmtTime(rows[i].start_s)],
          ['length', fmtTime(rows[i].end_s - rows[i].start_s)]
        ])
    ]);
  }
  const calls = data.calls.filter(
    c =>
      laneOf.has(c.rank) &&
      c.end_s !== null &&
      (c.arrival_s ?? c.start_s) !== null
  );
  if (calls.length) {
    const r = fig.quad({
      left: calls.map(c => (c.arrival_s ?? c.start_s)! * sc),
      right: calls.map(c => c.end_s! * sc),
      top: calls.map(c => -(laneOf.get(c.rank)! + 0.04)),
      bottom: calls.map(c => -(laneOf.get(c.rank)! + 0.96)),
      fill_color: COLORS.communication,
      fill_alpha: 0.08,
      line_color: COLORS.communication,
      line_width: 1.2,
      hover_fill_alpha: 0.3
    });
    hovers.push([
      r,
      i => {
        const c = calls[i];
        const rows: [string, string][] = [
          ['rank', String(c.rank)],
          ['group', c.group],
          ['size', fmtBytes(c.bytes)],
          ['step', c.step === null ? '\u2014' : String(c.step)],
          ['arrived', fmtTime(c.arrival_s)],
          ['transfer from', fmtTime(c.start_s)],
          ['ended', fmtTime(c.end_s)]
        ];
        if (c.arrival_s !== null && c.start_s !== null) {
          rows.push(['waited', fmtTime(Math.max(0, c.start_s - c.arrival_s))]);
        }
        return tip(`${c.op} (${c.where || '?'})`, rows);
      }
    ]);
  }
  for (const [r, render] of hovers) {
    fig.add_tools(
      hoverTool([r], render, {
        point_policy: 'follow_mouse',
        attachment: 'below'
      })
    );
  }
  style(fig, t);
  const ticks = data.ranks.map((_r, i) => -(i + 0.5));
  const overrides = new Map<number, string>();
  data.ranks.forEach((r, i) =>
    overrides.set(
      ticks[i],
      `rank ${Math.round(r)}${r === data.straggler ? ' (straggler)' : ''}`
    )
  );
  fig.yaxis.ticker = new FixedTicker({ ticks, minor_ticks: [] });
  fig.yaxis.major_label_overrides = overrides;
  fig.yaxis.major_tick_line_color = null;
  fig.ygrid.grid_line_alpha = 0;
  target.dataset.lanes = String(n);
  target.dataset.calls = String(calls.length);
  return showIn(fig, target);
}

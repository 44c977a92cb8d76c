/**
 * BokehJS charts of the Sweep and Memory tabs: time per step against size on
 * log-log axes with the flat and slope-1 guides, throughput against size, the
 * split of each size's span, and the memory timeline stacked by category.
 * Loaded lazily with BokehJS, like charts.ts, whose helpers style them; the
 * geometry comes from chart_data.ts. Strings from a report reach Bokeh only
 * as tooltips (DOM nodes set as text) and legend labels of known keys; axis
 * labels and titles are constants, safeLabel()s or built from numbers.
 */

import * as Plotting from '@bokeh/bokehjs/build/js/lib/api/plotting';
import {
  FixedTicker,
  Legend,
  LegendItem,
  Title
} from '@bokeh/bokehjs/build/js/lib/models';

import {
  hoverTool,
  IChartHandle,
  IChartTheme,
  safeLabel,
  showIn,
  style,
  styleLegend,
  timeUnit,
  tip
} from './charts';
import {
  bytesUnit,
  IGuide,
  ISweepPoint,
  IStackPart,
  IStepStacks,
  sizeTicks
} from './chart_data';
import { COLORS, LABELS } from './colors';
import { fmtBytes, fmtPct, fmtSI, fmtTime, fmtX } from './format';

type Figure = ReturnType<typeof Plotting.figure>;

/** A drawn series, in data and page coordinates (the test hook's answer). */
export interface ISeriesPoints {
  /** The series' name (its legend label, or its key). */
  name: string;
  /** Its points: data x and y, and where they are on the page. */
  points: { x: number; y: number; px: number; py: number }[];
}

interface ISeries {
  name: string;
  x: number[];
  y: number[];
}

/**
 * Test hook: `el.jupyterBrrrSeries()` returns each drawn series with its
 * points in page pixels, computed on each call from the plot's scales, so a
 * browser test can check what was drawn and hover a point.
 */
function exposeSeries(target: HTMLElement, view: any, series: ISeries[]) {
  (target as any).jupyterBrrrSeries = (): ISeriesPoints[] => {
    const frame = view.frame;
    const box = view.canvas.events_el.getBoundingClientRect();
    return series.map(s => ({
      name: s.name,
      points: s.x.map((x, i) => ({
        x,
        y: s.y[i],
        px: box.left + frame.x_scale.compute(x),
        py: box.top + frame.y_scale.compute(s.y[i])
      }))
    }));
  };
  target.dataset.series = String(series.length);
}

/** A chart's title (a constant) in the theme's text colour and font. */
function title(text: string, t: IChartTheme): Title {
  return new Title({
    text,
    text_color: t.fg,
    text_font: t.font,
    text_font_size: '12px',
    text_font_style: 'bold'
  });
}

/** Size ticks on a log x axis, labelled with the sizes themselves. */
function sizeAxis(fig: Figure, sizes: number[]): void {
  const ticks = sizeTicks(sizes);
  const labels = new Map<number, string>();
  ticks.forEach(s => labels.set(s, String(Math.round(s))));
  fig.xaxis.ticker = new FixedTicker({ ticks, minor_ticks: [] });
  fig.xaxis.major_label_overrides = labels;
}

/** Colours of the guides: flat is overhead's, slope 1 compute's. */
const GUIDE_COLORS: { [key: string]: string } = {
  flat: COLORS.idle,
  linear: COLORS.compute
};

/** The verdict of a doubling in words, for a tooltip row. */
function verdictText(p: ISweepPoint): string {
  if (!p.verdict) {
    return '\u2014';
  }
  return `${p.verdict} (${fmtX(p.per_doubling)} per doubling)`;
}

/**
 * Time per step against size, log-log, with the guides dashed and one marker
 * per measured size filled in the colour of the verdict of the doubling that
 * reached it (the first size: hollow).
 */
export async function drawSweepTime(
  target: HTMLElement,
  points: ISweepPoint[],
  guides: IGuide[],
  variable: string,
  verdictColors: { [verdict: string]: string },
  t: IChartTheme
): Promise<IChartHandle> {
  const all = [...points.map(p => p.span_s), ...guides.flatMap(g => g.y)];
  const unit = timeUnit(Math.max(...all, 1e-12));
  const sc = unit.scale;
  const sizes = [...points.map(p => p.size), ...guides.flatMap(g => g.x)];
  const lo = Math.min(...all) * sc;
  const hi = Math.max(...all) * sc;
  const fig = Plotting.figure({
    title: title('Time per step', t),
    x_axis_type: 'log',
    y_axis_type: 'log',
    x_range: [Math.min(...sizes) / 1.25, Math.max(...sizes) * 1.25],
    y_range: [lo / 1.5, hi * 1.5],
    height: 280,
    sizing_mode: 'stretch_width',
    x_axis_label: safeLabel(variable),
    y_axis_label: `Time per step (${unit.label})`,
    tools: 'pan,wheel_zoom,reset,save',
    toolbar_location: 'right'
  });
  const series: ISeries[] = [];
  for (const g of guides) {
    fig.line({
      x: g.x,
      y: g.y.map(y => y * sc),
      line_color: GUIDE_COLORS[g.key] ?? t.fg2,
      line_dash: 'dashed',
      line_width: 1.5,
      legend_label: g.label
    });
    series.push({ name: g.label, x: g.x, y: g.y.map(y => y * sc) });
  }
  const xs = points.map(p => p.size);
  const ys = points.map(p => p.span_s * sc);
  fig.line({
    x: xs,
    y: ys,
    line_color: t.fg,
    line_width: 1.8,
    legend_label: 'measured'
  });
  const markers = fig.scatter({
    x: xs,
    y: ys,
    size: 9,
    marker: 'circle',
    fill_color: points.map(p =>
      p.verdict ? (verdictColors[p.verdict] ?? t.fg2) : t.bg
    ),
    line_color: t.fg,
    line_width: 1.2,
    hover_fill_alpha: 1,
    legend_label: 'measured'
  });
  series.push({ name: 'measured', x: xs, y: ys });
  fig.add_tools(
    hoverTool([markers], i => {
      const p = points[i];
      const rows: [string, string][] = [
        ['time per step', fmtTime(p.span_s)],
        [
          'spread (q1\u2013q3)',
          p.q1_s !== null && p.q3_s !== null
            ? `${fmtTime(p.q1_s)} \u2013 ${fmtTime(p.q3_s)}`
            : '\u2014'
        ],
        ['items/s', fmtSI(p.items_per_s, '/s')]
      ];
      if (p.from_size !== null) {
        rows.push([`from ${p.from_size}`, verdictText(p)]);
      }
      return tip(`${variable} = ${p.size}`, rows);
    })
  );
  style(fig, t);
  styleLegend(fig.legend, t);
  fig.legend.location = 'top_left';
  sizeAxis(fig, sizes);
  return showIn(fig, target, view => exposeSeries(target, view, series));
}

/** Items per second against size (log x, linear y from zero). */
export async function drawSweepThroughput(
  target: HTMLElement,
  points: ISweepPoint[],
  variable: string,
  t: IChartTheme
): Promise<IChartHandle> {
  const shown = points.filter(p => (p.items_per_s ?? 0) > 0);
  const top = Math.max(...shown.map(p => p.items_per_s!), 1);
  const prefix = [
    { p: 1e12, s: 'T' },
    { p: 1e9, s: 'G' },
    { p: 1e6, s: 'M' },
    { p: 1e3, s: 'k' }
  ].find(u => top >= u.p) ?? { p: 1, s: '' };
  const sizes = points.map(p => p.size);
  const fig = Plotting.figure({
    title: title('Items per second', t),
    x_axis_type: 'log',
    x_range: [Math.min(...sizes) / 1.25, Math.max(...sizes) * 1.25],
    y_range: [0, (top / prefix.p) * 1.12],
    height: 280,
    sizing_mode: 'stretch_width',
    x_axis_label: safeLabel(variable),
    y_axis_label: `Items per second${prefix.s ? ` (${prefix.s})` : ''}`,
    tools: 'pan,wheel_zoom,reset,save',
    toolbar_location: 'right'
  });
  const xs = shown.map(p => p.size);
  const ys = shown.map(p => p.items_per_s! / prefix.p);
  fig.line({ x: xs, y: ys, line_color: '#54a24b', line_width: 1.8 });
  const markers = fig.scatter({
    x: xs,
    y: ys,
    size: 8,
    marker: 'circle',
    fill_color: '#54a24b',
    line_color: '#54a24b',
    hover_fill_alpha: 1
  });
  fig.add_tools(
    hoverTool([markers], i =>
      tip(`${variable} = ${shown[i].size}`, [
        ['items/s', fmtSI(shown[i].items_per_s, '/s')],
        ['time per step', fmtTime(shown[i].span_s)]
      ])
    )
  );
  style(fig, t);
  sizeAxis(fig, sizes);
  return showIn(fig, target, view =>
    exposeSeries(target, view, [{ name: 'throughput', x: xs, y: ys }])
  );
}

/**
 * The split of each size's span as a bar of 100%, stacked bottom to top in
 * the split's order; `spans` are each size's parts in seconds, for the tooltip.
 */
export async function drawSweepSplit(
  target: HTMLElement,
  sizes: number[],
  parts: IStackPart[],
  variable: string,
  t: IChartTheme
): Promise<IChartHandle> {
  const xs = sizes.map((_s, i) => i);
  const fig = Plotting.figure({
    title: title('Split of the span', t),
    x_range: [-0.6, sizes.length - 0.4],
    y_range: [0, 100],
    height: 280,
    sizing_mode: 'stretch_width',
    x_axis_label: safeLabel(variable),
    y_axis_label: 'Share of the span (%)',
    tools: 'reset,save',
    toolbar_location: 'right'
  });
  const renderers: any[] = [];
  const series: ISeries[] = [];
  for (const part of parts) {
    renderers.push(
      fig.vbar({
        x: xs,
        bottom: part.bottom.map(b => b * 100),
        top: part.top.map(b => b * 100),
        width: 0.7,
        fill_color: COLORS[part.key] ?? '#888',
        fill_alpha: 0.9,
        line_color: null,
        hover_fill_alpha: 1
      })
    );
    series.push({
      name: part.key,
      x: xs,
      y: part.top.map((top, i) => ((top + part.bottom[i]) / 2) * 100)
    });
  }
  const total = (i: number) => parts.reduce((a, p) => a + p.value[i], 0);
  fig.add_tools(
    hoverTool(renderers, i =>
      tip(
        `${variable} = ${sizes[i]}`,
        parts
          .filter(p => p.value[i] > 0)
          .map(
            p =>
              [
                LABELS[p.key] ?? p.key,
                `${fmtTime(p.value[i])} (${fmtPct(p.value[i] / (total(i) || 1), 0)})`
              ] as [string, string]
          )
      )
    )
  );
  style(fig, t);
  const labels = new Map<number, string>();
  sizes.forEach((s, i) => labels.set(i, String(Math.round(s))));
  fig.xaxis.ticker = new FixedTicker({ ticks: xs, minor_ticks: [] });
  fig.xaxis.major_label_overrides = labels;
  fig.xgrid.grid_line_alpha = 0;
  return showIn(fig, target, view => exposeSeries(target, view, series));
}

/** What the memory timeline draws besides the stacked categories. */
export interface IMemoryLines {
  /** The moments of the timeline, seconds. */
  times: number[];
  /** The allocator's total at each moment (steps), or empty. */
  allocated: number[];
  /** The capacity line, or null where it would flatten the timeline. */
  capacity: number | null;
}

/**
 * The memory timeline: the categories stacked as steps (each moment's bytes
 * hold until the next), the allocator's total as a step line, and the
 * capacity dashed.
 */
export async function drawMemoryTimeline(
  target: HTMLElement,
  steps: IStepStacks,
  lines: IMemoryLines,
  colors: { [category: string]: string },
  t: IChartTheme
): Promise<IChartHandle> {
  const { times, allocated, capacity } = lines;
  const top = Math.max(...steps.total, ...allocated, capacity ?? 0, 1);
  const bu = bytesUnit(top);
  const start = times.length ? times[0] : 0;
  const end = times.length ? times[times.length - 1] : 1;
  const tu = timeUnit(Math.max(end - start, 1e-9));
  const fig = Plotting.figure({
    height: 300,
    sizing_mode: 'stretch_width',
    x_range: [start * tu.scale, end * tu.scale],
    y_range: [0, top * bu.scale * 1.06],
    x_axis_label: `Time from the run\u2019s start (${tu.label})`,
    y_axis_label: `Memory (${bu.label})`,
    tools: 'xpan,xwheel_zoom,xbox_zoom,reset,save',
    toolbar_location: 'right'
  });
  const items: any[] = [];
  const series: ISeries[] = [];
  for (const part of steps.parts) {
    // Only the steps where the category holds bytes: hover finds those.
    const idx = part.value.map((_v, i) => i).filter(i => part.value[i] > 0);
    const r = fig.quad({
      left: idx.map(i => steps.start[i] * tu.scale),
      right: idx.map(i => steps.end[i] * tu.scale),
      bottom: idx.map(i => part.bottom[i] * bu.scale),
      top: idx.map(i => part.top[i] * bu.scale),
      fill_color: colors[part.key] ?? '#999',
      fill_alpha: 0.85,
      // Outlined in its own colour: no seams between the steps.
      line_color: colors[part.key] ?? '#999',
      line_alpha: 0.85,
      line_width: 0.5,
      hover_fill_alpha: 1
    });
    fig.add_tools(
      hoverTool(
        [r],
        j => {
          const i = idx[j];
          return tip(part.key.replace(/_/g, ' '), [
            ['from', fmtTime(steps.start[i])],
            ['to', fmtTime(steps.end[i])],
            ['bytes', fmtBytes(part.value[i])],
            ['all categories', fmtBytes(steps.total[i])],
            [
              'share',
              fmtPct(steps.total[i] ? part.value[i] / steps.total[i] : null)
            ]
          ]);
        },
        { point_policy: 'follow_mouse', attachment: 'below' }
      )
    );
    items.push(
      new LegendItem({
        label: { value: part.key.replace(/_/g, ' ') },
        renderers: [r]
      })
    );
    series.push({
      name: part.key,
      x: idx.map(i => ((steps.start[i] + steps.end[i]) / 2) * tu.scale),
      y: idx.map(i => ((part.bottom[i] + part.top[i]) / 2) * bu.scale)
    });
  }
  if (allocated.length === times.length && times.length) {
    const x = times.map(v => v * tu.scale);
    const y = allocated.map(v => v * bu.scale);
    const r = fig.step({
      x,
      y,
      mode: 'after',
      line_color: t.fg,
      line_width: 1
    });
    items.push(
      new LegendItem({ label: { value: 'allocated' }, renderers: [r] })
    );
    series.push({ name: 'allocated', x, y });
  }
  if (capacity !== null) {
    const x = [start * tu.scale, end * tu.scale];
    const y = [capacity * bu.scale, capacity * bu.scale];
    const r = fig.line({
      x,
      y,
      line_color: '#c62828',
      line_dash: 'dashed',
      line_width: 1.5
    });
    items.push(
      new LegendItem({ label: { value: 'capacity' }, renderers: [r] })
    );
    series.push({ name: 'capacity', x, y });
  }
  style(fig, t);
  if (items.length) {
    const legend = new Legend({ items, location: 'top_left' });
    styleLegend(legend, t);
    fig.add_layout(legend, 'right');
  }
  return showIn(fig, target, view => exposeSeries(target, view, series));
}

/**
 * Small SVG charts drawn from data only (no HTML strings, no event
 * attributes): the sweep's log-log line charts and stacked bars, and the
 * memory timeline's stacked areas.
 */

const NS = 'http://www.w3.org/2000/svg';

/** Create an SVG element with attributes; text children become text nodes. */
export function s(
  tag: string,
  attrs: { [key: string]: string | number } = {},
  ...children: (Node | string)[]
): SVGElement {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.toLowerCase().startsWith('on')) {
      continue;
    }
    el.setAttribute(k, String(v));
  }
  for (const c of children) {
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return el;
}

/** One series of a line chart. */
export interface ILine {
  /** Its name, for the legend and tests. */
  name: string;
  /** Points, [x, y]. */
  points: [number, number][];
  /** Stroke colour. */
  color: string;
  /** Dashed (a guide) or solid with markers (measured). */
  dashed?: boolean;
}

/** The frame of a chart: size, margins and scales. */
export interface IFrame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

const FRAME: IFrame = {
  width: 300,
  height: 200,
  left: 52,
  right: 10,
  top: 18,
  bottom: 34
};

function scale(
  lo: number,
  hi: number,
  a: number,
  b: number,
  log: boolean
): (v: number) => number {
  const f = (v: number) => (log ? Math.log(Math.max(v, 1e-300)) : v);
  const l = f(lo);
  const span = f(hi) - l || 1;
  return (v: number) => a + ((f(v) - l) / span) * (b - a);
}

/** Ticks: powers of two or ten on a log axis, five steps on a linear one. */
function ticks(lo: number, hi: number, log: boolean, base: number): number[] {
  if (!log) {
    const step = (hi - lo) / 4 || 1;
    return [0, 1, 2, 3, 4].map(i => lo + i * step);
  }
  const out: number[] = [];
  let v = Math.pow(base, Math.floor(Math.log(lo) / Math.log(base)));
  while (v <= hi * 1.0001) {
    if (v >= lo / 1.0001) {
      out.push(v);
    }
    v *= base;
  }
  if (out.length < 3 && base === 10) {
    const fine: number[] = [];
    let d = Math.pow(10, Math.floor(Math.log10(lo)));
    while (d <= hi * 1.0001) {
      for (const m of [1, 2, 5]) {
        if (d * m >= lo / 1.0001 && d * m <= hi * 1.0001) {
          fine.push(d * m);
        }
      }
      d *= 10;
    }
    return fine;
  }
  if (out.length > 6) {
    const every = Math.ceil(out.length / 6);
    return out.filter((_, i) => i % every === 0);
  }
  return out;
}

/** A line chart, log-log or log-linear, with a title, axes and a legend. */
export function lineChart(
  title: string,
  lines: ILine[],
  opts: {
    logY: boolean;
    xLabel: string;
    yFormat: (v: number) => string;
    testid: string;
  }
): SVGElement {
  const f = FRAME;
  const all = lines.flatMap(l => l.points).filter(p => p[0] > 0 && p[1] > 0);
  const svg = s('svg', {
    width: f.width,
    height: f.height,
    viewBox: `0 0 ${f.width} ${f.height}`,
    class: 'jp-brrr-svgchart',
    'data-testid': opts.testid,
    role: 'img',
    'aria-label': title
  });
  svg.appendChild(
    s(
      'text',
      { x: f.left, y: 12, 'font-size': 11, 'font-weight': 'bold' },
      title
    )
  );
  if (!all.length) {
    return svg;
  }
  const xs = all.map(p => p[0]);
  const ys = all.map(p => p[1]);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const y0 = opts.logY ? Math.min(...ys) / 1.3 : 0;
  const y1 = Math.max(...ys) * (opts.logY ? 1.3 : 1.1);
  const X = scale(x0, x1, f.left, f.width - f.right, true);
  const Y = scale(y0, y1, f.height - f.bottom, f.top, opts.logY);
  const axis = s('g', { class: 'jp-brrr-svgaxis', 'font-size': 9 });
  axis.appendChild(
    s('line', {
      x1: f.left,
      y1: f.height - f.bottom,
      x2: f.width - f.right,
      y2: f.height - f.bottom,
      stroke: 'currentColor',
      'stroke-opacity': 0.5
    })
  );
  axis.appendChild(
    s('line', {
      x1: f.left,
      y1: f.top,
      x2: f.left,
      y2: f.height - f.bottom,
      stroke: 'currentColor',
      'stroke-opacity': 0.5
    })
  );
  for (const t of ticks(x0, x1, true, 2)) {
    axis.appendChild(
      s(
        'text',
        { x: X(t), y: f.height - f.bottom + 12, 'text-anchor': 'middle' },
        t >= 1e4 ? t.toExponential(0) : String(Math.round(t))
      )
    );
  }
  for (const t of ticks(y0 || y1 / 10, y1, opts.logY, 10)) {
    axis.appendChild(
      s(
        'text',
        { x: f.left - 4, y: Y(t) + 3, 'text-anchor': 'end' },
        opts.yFormat(t)
      )
    );
  }
  axis.appendChild(
    s(
      'text',
      {
        x: (f.left + f.width - f.right) / 2,
        y: f.height - 6,
        'text-anchor': 'middle'
      },
      opts.xLabel
    )
  );
  svg.appendChild(axis);
  let legendY = f.top + 4;
  for (const line of lines) {
    const pts = line.points.filter(p => p[0] > 0 && (p[1] > 0 || !opts.logY));
    if (!pts.length) {
      continue;
    }
    const d = pts
      .map(
        (p, i) => `${i ? 'L' : 'M'}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`
      )
      .join(' ');
    const g = s('g', { 'data-series': line.name });
    g.appendChild(
      s('path', {
        d,
        fill: 'none',
        stroke: line.color,
        'stroke-width': line.dashed ? 1 : 1.6,
        'stroke-dasharray': line.dashed ? '4 3' : 'none'
      })
    );
    if (!line.dashed) {
      for (const p of pts) {
        const dot = s('circle', {
          cx: X(p[0]).toFixed(1),
          cy: Y(p[1]).toFixed(1),
          r: 2.5,
          fill: line.color
        });
        dot.appendChild(s('title', {}, `${p[0]}: ${opts.yFormat(p[1])}`));
        g.appendChild(dot);
      }
    }
    svg.appendChild(g);
    svg.appendChild(
      s(
        'text',
        {
          x: f.width - f.right - 2,
          y: legendY,
          'text-anchor': 'end',
          'font-size': 9,
          fill: line.color
        },
        line.name
      )
    );
    legendY += 11;
  }
  return svg;
}

/** Stacked bars (one per x label), each part a share of its bar. */
export function stackedBars(
  title: string,
  labels: string[],
  parts: { key: string; color: string; values: number[] }[],
  testid: string
): SVGElement {
  const f = FRAME;
  const svg = s('svg', {
    width: f.width,
    height: f.height,
    viewBox: `0 0 ${f.width} ${f.height}`,
    class: 'jp-brrr-svgchart',
    'data-testid': testid,
    role: 'img',
    'aria-label': title
  });
  svg.appendChild(
    s(
      'text',
      { x: f.left, y: 12, 'font-size': 11, 'font-weight': 'bold' },
      title
    )
  );
  const n = labels.length;
  if (!n) {
    return svg;
  }
  const inner = f.width - f.left - f.right;
  const barW = (inner / n) * 0.7;
  const H = f.height - f.top - f.bottom;
  for (let i = 0; i < n; i++) {
    const total = parts.reduce((a, p) => a + (p.values[i] ?? 0), 0) || 1;
    let y = f.height - f.bottom;
    const x = f.left + (inner / n) * i + (inner / n - barW) / 2;
    for (const p of parts) {
      const share = (p.values[i] ?? 0) / total;
      if (share <= 0) {
        continue;
      }
      const h = share * H;
      y -= h;
      const rect = s('rect', {
        x: x.toFixed(1),
        y: y.toFixed(1),
        width: barW.toFixed(1),
        height: h.toFixed(1),
        fill: p.color,
        'data-part': p.key
      });
      rect.appendChild(
        s('title', {}, `${labels[i]}: ${p.key} ${(share * 100).toFixed(0)}%`)
      );
      svg.appendChild(rect);
    }
    svg.appendChild(
      s(
        'text',
        {
          x: (x + barW / 2).toFixed(1),
          y: f.height - f.bottom + 12,
          'text-anchor': 'middle',
          'font-size': 9
        },
        labels[i]
      )
    );
  }
  return svg;
}

/** Stacked areas over time (steps), with optional horizontal lines. */
export function stackedAreas(
  title: string,
  times: number[],
  series: { key: string; color: string; values: number[] }[],
  lines: { name: string; color: string; value: number }[],
  total: number[],
  opts: {
    xLabel: string;
    xFormat: (v: number) => string;
    yFormat: (v: number) => string;
    testid: string;
  }
): SVGElement {
  const f = { ...FRAME, width: 620, height: 220 };
  const svg = s('svg', {
    width: f.width,
    height: f.height,
    viewBox: `0 0 ${f.width} ${f.height}`,
    class: 'jp-brrr-svgchart',
    'data-testid': opts.testid,
    role: 'img',
    'aria-label': title
  });
  svg.appendChild(
    s(
      'text',
      { x: f.left, y: 12, 'font-size': 11, 'font-weight': 'bold' },
      title
    )
  );
  if (times.length < 2) {
    return svg;
  }
  const stacks = times.map((_, i) =>
    series.reduce((a, p) => a + (p.values[i] ?? 0), 0)
  );
  const top = Math.max(...stacks, ...total, ...lines.map(l => l.value), 1);
  const X = scale(
    times[0],
    times[times.length - 1],
    f.left,
    f.width - f.right,
    false
  );
  const Y = scale(0, top * 1.05, f.height - f.bottom, f.top, false);
  const base = times.map(() => 0);
  for (const p of series) {
    if (!p.values.some(v => v > 0)) {
      continue;
    }
    const upper = base.map((b, i) => b + (p.values[i] ?? 0));
    const pts: string[] = [];
    for (let i = 0; i < times.length; i++) {
      const xNext = i + 1 < times.length ? times[i + 1] : times[i];
      pts.push(`${X(times[i]).toFixed(1)},${Y(upper[i]).toFixed(1)}`);
      pts.push(`${X(xNext).toFixed(1)},${Y(upper[i]).toFixed(1)}`);
    }
    for (let i = times.length - 1; i >= 0; i--) {
      const xNext = i + 1 < times.length ? times[i + 1] : times[i];
      pts.push(`${X(xNext).toFixed(1)},${Y(base[i]).toFixed(1)}`);
      pts.push(`${X(times[i]).toFixed(1)},${Y(base[i]).toFixed(1)}`);
    }
    const poly = s('polygon', {
      points: pts.join(' '),
      fill: p.color,
      'data-part': p.key
    });
    poly.appendChild(s('title', {}, p.key.replace(/_/g, ' ')));
    svg.appendChild(poly);
    for (let i = 0; i < base.length; i++) {
      base[i] = upper[i];
    }
  }
  if (total.length === times.length) {
    // Steps, as the allocator's total holds until its next event.
    const d = times
      .map((t, i) => {
        const y = Y(total[i]).toFixed(1);
        const next = i + 1 < times.length ? times[i + 1] : t;
        return `${i ? 'L' : 'M'}${X(t).toFixed(1)},${y} L${X(next).toFixed(1)},${y}`;
      })
      .join(' ');
    svg.appendChild(
      s('path', {
        d,
        fill: 'none',
        stroke: 'currentColor',
        'stroke-width': 0.8,
        'data-series': 'allocated'
      })
    );
  }
  for (const l of lines) {
    svg.appendChild(
      s('line', {
        x1: f.left,
        x2: f.width - f.right,
        y1: Y(l.value).toFixed(1),
        y2: Y(l.value).toFixed(1),
        stroke: l.color,
        'stroke-dasharray': '5 3',
        'data-series': l.name
      })
    );
  }
  const axis = s('g', { 'font-size': 9 });
  for (const t of ticks(times[0], times[times.length - 1], false, 10)) {
    axis.appendChild(
      s(
        'text',
        { x: X(t), y: f.height - f.bottom + 12, 'text-anchor': 'middle' },
        opts.xFormat(t)
      )
    );
  }
  for (const t of ticks(0, top, false, 10)) {
    axis.appendChild(
      s(
        'text',
        { x: f.left - 4, y: Y(t) + 3, 'text-anchor': 'end' },
        opts.yFormat(t)
      )
    );
  }
  axis.appendChild(
    s(
      'text',
      {
        x: (f.left + f.width - f.right) / 2,
        y: f.height - 6,
        'text-anchor': 'middle'
      },
      opts.xLabel
    )
  );
  svg.appendChild(axis);
  return svg;
}

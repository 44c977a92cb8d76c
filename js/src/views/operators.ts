/**
 * Operators: a bar chart of the top ops (grouped by op, category or module)
 * and a sortable, filterable table; a click on a row lists its kernels.
 */

import type { IBarGroup, IChartHandle } from '../charts';
import { boundKey, BOUNDS } from '../colors';
import { clear, h } from '../dom';
import { ellipsize, fmtInt, fmtPct, fmtSI, fmtTime, sig } from '../format';
import { opTime } from '../model';
import type { IKernelRow, IModuleRow, IOpRow } from '../schema';
import {
  badge,
  colorLegend,
  emptyState,
  heading,
  IViewContext,
  tableHead
} from './common';

/** How many table rows are drawn at first, and per "show more". */
export const PAGE_ROWS = 200;

/** How many bars the top-ops chart shows. */
const TOP_BARS = 20;

interface IColumn {
  key: string;
  label: string;
  title: string;
  num: boolean;
  value: (o: IOpRow) => number | string | null;
  cell: (o: IOpRow) => Node | string;
}

function roofMeter(f: number | null, roof = '', flag = ''): Node {
  const el = h('span', { class: 'jp-brrr-roof' });
  if (f === null) {
    el.appendChild(document.createTextNode('\u2014'));
    return el;
  }
  if (flag) {
    // Above its roof: a model or peak mismatch, never shown as achieved.
    el.setAttribute('title', flag);
    el.appendChild(document.createTextNode(`\u26a0 over the ${roof} roof`));
    return el;
  }
  if (roof) {
    el.setAttribute('title', `of the ${roof} roof`);
  }
  const bar = h('span', { class: 'jp-brrr-roof-bar' });
  bar.appendChild(
    h('span', {
      class: 'jp-brrr-roof-fill',
      style: { width: `${Math.min(1, Math.max(0, f)) * 100}%` }
    })
  );
  el.appendChild(bar);
  el.appendChild(document.createTextNode(fmtPct(f, 0)));
  return el;
}

function columns(cpuOnly: boolean): IColumn[] {
  const cols: IColumn[] = [
    {
      key: 'name',
      label: 'op',
      title: 'Operator name (its module and source line below it)',
      num: false,
      value: o => o.name,
      cell: o => opCell(o)
    },
    {
      key: 'shapes',
      label: 'shapes',
      title: 'Input shapes',
      num: false,
      value: o => o.shapes,
      cell: o => ellipsize(o.shapes, 36)
    },
    {
      key: 'category',
      label: 'category',
      title: 'Op category',
      num: false,
      value: o => o.category,
      cell: o => o.category
    },
    {
      key: 'calls',
      label: 'calls',
      title: 'Number of calls',
      num: true,
      value: o => o.calls,
      cell: o => fmtInt(o.calls)
    }
  ];
  if (!cpuOnly) {
    cols.push(
      {
        key: 'gpu_time_s',
        label: 'self GPU',
        title: 'Self GPU time: kernels this op launched itself',
        num: true,
        value: o => o.gpu_time_s,
        cell: o => fmtTime(o.gpu_time_s)
      },
      {
        key: 'total_gpu_time_s',
        label: 'total GPU',
        title: 'GPU time including child ops',
        num: true,
        value: o => o.total_gpu_time_s,
        cell: o => fmtTime(o.total_gpu_time_s)
      }
    );
  }
  if (cpuOnly) {
    // What the chart shows, and the default sort: time in the op itself.
    cols.push({
      key: 'self_cpu_time_s',
      label: 'self CPU',
      title: 'Host time in the op itself, its child ops excluded',
      num: true,
      value: o => o.self_cpu_time_s,
      cell: o => fmtTime(o.self_cpu_time_s)
    });
  }
  cols.push({
    key: 'cpu_time_s',
    label: cpuOnly ? 'total CPU' : 'CPU',
    title: 'Host time including children',
    num: true,
    value: o => o.cpu_time_s,
    cell: o => fmtTime(o.cpu_time_s)
  });
  if (!cpuOnly) {
    cols.push(
      {
        key: 'flops_per_s',
        label: 'TFLOP/s',
        title: 'Achieved TFLOP/s',
        num: true,
        value: o => o.flops_per_s,
        cell: o =>
          o.flops_per_s === null ? '\u2014' : sig(o.flops_per_s / 1e12)
      },
      {
        key: 'bytes_per_s',
        label: 'GB/s',
        title: 'Achieved GB/s (minimum traffic)',
        num: true,
        value: o => o.bytes_per_s,
        cell: o =>
          o.bytes_per_s === null ? '\u2014' : sig(o.bytes_per_s / 1e9)
      },
      {
        key: 'intensity',
        label: 'FLOP/B',
        title: 'Arithmetic intensity: FLOPs per byte moved',
        num: true,
        value: o => o.intensity,
        cell: o => (o.intensity === null ? '\u2014' : sig(o.intensity))
      },
      {
        key: 'roof_fraction',
        label: '% of roof',
        title: 'Achieved / attainable on the roofline',
        num: true,
        value: o => o.roof_fraction,
        cell: o => roofMeter(o.roof_fraction, o.roof, o.roof_flag)
      }
    );
  }
  cols.push({
    key: 'bound',
    label: 'bound',
    title: 'What limits this op',
    num: false,
    value: o => o.bound,
    cell: o => badge(o.bound)
  });
  if (!cpuOnly) {
    cols.push({
      key: 'reason',
      label: 'why under roof',
      title:
        'Far under its roof: the reason it most likely has (hover for the evidence); ' +
        'otherwise its side of the roofline',
      num: false,
      value: o => o.reason || o.regime,
      cell: o => reasonCell(o)
    });
  }
  return cols;
}

/** The op's name, and under it its module path and source line where known. */
function opCell(o: IOpRow): Node {
  const where = [o.module, o.line].filter(x => x).join(' \u00b7 ');
  if (!where) {
    return document.createTextNode(o.name);
  }
  const box = h('span', null, o.name);
  box.appendChild(
    h('div', { class: 'jp-brrr-op-where jp-brrr-muted' }, ellipsize(where, 60))
  );
  return box;
}

/** An op's reason for being far under its roof (the evidence as a tooltip), or its regime. */
function reasonCell(o: IOpRow): Node {
  if (!o.reason) {
    return h(
      'span',
      { class: 'jp-brrr-muted' },
      o.regime ? `${o.regime} side` : ''
    );
  }
  return h(
    'span',
    { class: 'jp-brrr-reason', title: o.why, data: { reason: o.reason } },
    o.reason
  );
}

/**
 * The module tree: each module's time with its submodules, the larger subtree
 * first among siblings; a click on a module opens or closes its children.
 */
export function moduleTree(
  modules: IModuleRow[],
  cpu: boolean,
  total: number
): HTMLElement {
  const time = (m: IModuleRow) => (cpu ? m.cpu_time_s : m.gpu_time_s) ?? 0;
  const own = (m: IModuleRow) =>
    (cpu ? m.self_cpu_time_s : m.self_gpu_time_s) ?? 0;
  const children = new Map<string, IModuleRow[]>();
  for (const m of modules) {
    if (!m.path) {
      continue;
    }
    const list = children.get(m.parent) ?? [];
    list.push(m);
    children.set(m.parent, list);
  }
  for (const list of children.values()) {
    list.sort((a, b) => time(b) - time(a));
  }
  const outside = modules.find(m => !m.path);
  // The roots and their children open at first.
  const open = new Set<string>(
    modules.filter(m => m.path && m.depth === 0).map(m => m.path)
  );
  const box = h('div', {
    class: 'jp-brrr-module-tree',
    data: { testid: 'brrr-module-tree' }
  });
  const table = h('table', { class: 'jp-brrr-table jp-brrr-compact' });
  table.appendChild(
    tableHead([
      ['module'],
      [cpu ? 'CPU time' : 'GPU time', true],
      ['share', true],
      ['in itself', true],
      ['op calls', true]
    ])
  );
  const tbody = h('tbody');
  table.appendChild(tbody);
  box.appendChild(table);

  const line = (m: IModuleRow, name: string, depth: number): HTMLElement => {
    const kids = children.get(m.path) ?? [];
    const caret = kids.length ? (open.has(m.path) ? '\u25be' : '\u25b8') : '';
    const tr = h(
      'tr',
      {
        class: 'jp-brrr-module-row',
        data: { testid: 'brrr-module-row', path: m.path },
        attrs: kids.length
          ? { tabindex: '0', 'aria-expanded': String(open.has(m.path)) }
          : {}
      },
      h(
        'td',
        { title: m.path || 'ops outside any module' },
        h(
          'span',
          { style: { paddingLeft: `${12 * depth}px` } },
          h('span', { class: 'jp-brrr-caret' }, caret),
          name
        )
      ),
      h('td', { class: 'jp-brrr-num' }, fmtTime(time(m))),
      h(
        'td',
        { class: 'jp-brrr-num' },
        fmtPct(total > 0 ? time(m) / total : null)
      ),
      h('td', { class: 'jp-brrr-num' }, fmtTime(own(m))),
      h('td', { class: 'jp-brrr-num' }, fmtInt(m.calls))
    );
    if (kids.length) {
      const toggle = () => {
        if (open.has(m.path)) {
          open.delete(m.path);
        } else {
          open.add(m.path);
        }
        draw();
      };
      tr.addEventListener('click', toggle);
      tr.addEventListener('keydown', ev => {
        if (ev.key === 'Enter') {
          toggle();
        }
      });
    }
    return tr;
  };

  const draw = () => {
    clear(tbody);
    const visit = (parent: string, depth: number) => {
      for (const m of children.get(parent) ?? []) {
        const name = m.path.slice(parent ? parent.length + 1 : 0);
        tbody.appendChild(line(m, name, depth));
        if (open.has(m.path)) {
          visit(m.path, depth + 1);
        }
      }
    };
    visit('', 0);
    if (outside) {
      tbody.appendChild(line(outside, '(no module)', 0));
    }
  };
  draw();
  return box;
}

/** Group op rows by op name, category or module, summing time per bound. */
export function groupOps(
  ops: IOpRow[],
  by: 'op' | 'category' | 'module',
  time: (o: IOpRow) => number
): IBarGroup[] {
  const m = new Map<string, IBarGroup>();
  for (const o of ops) {
    const t = time(o);
    if (!(t > 0)) {
      continue;
    }
    const key =
      by === 'op'
        ? o.name
        : by === 'category'
          ? o.category || '(none)'
          : o.module || '(no module)';
    let g = m.get(key);
    if (!g) {
      g = { name: key, byBound: {}, total: 0, count: 0 };
      m.set(key, g);
    }
    const b = boundKey(o.bound);
    g.byBound[b] = (g.byBound[b] ?? 0) + t;
    g.total += t;
    g.count += 1;
  }
  return [...m.values()].sort((a, b) => b.total - a.total);
}

function kernelTable(name: string, kernels: IKernelRow[]): HTMLElement {
  const box = h('div', { class: 'jp-brrr-kernels' });
  if (!kernels.length) {
    box.appendChild(
      h('div', { class: 'jp-brrr-muted' }, 'No kernels recorded for this op.')
    );
    return box;
  }
  // Aggregate identical kernel names on the same stream.
  const agg = new Map<
    string,
    { k: IKernelRow; n: number; t: number; flops: number; bytes: number }
  >();
  for (const k of kernels) {
    const key = `${k.stream}\u0000${k.name}`;
    const a = agg.get(key) ?? { k, n: 0, t: 0, flops: 0, bytes: 0 };
    a.n += k.count ?? 1;
    a.t += k.dur_s ?? 0;
    a.flops += k.flops ?? 0;
    a.bytes += k.bytes ?? 0;
    agg.set(key, a);
  }
  const rows = [...agg.values()].sort((a, b) => b.t - a.t);
  const SHOWN = 50;
  box.appendChild(
    h(
      'div',
      { class: 'jp-brrr-muted' },
      `${fmtInt(kernels.length)} kernel rows launched by ${name} (all shapes)` +
        (rows.length > SHOWN ? `; the ${SHOWN} longest shown` : '')
    )
  );
  const table = h('table', { class: 'jp-brrr-table jp-brrr-compact' });
  table.appendChild(
    tableHead([
      ['kernel'],
      ['stream', true],
      ['launches', true],
      ['time', true],
      ['FLOPs', true],
      ['bytes', true],
      ['bound']
    ])
  );
  const tb = h('tbody');
  for (const a of rows.slice(0, SHOWN)) {
    tb.appendChild(
      h(
        'tr',
        null,
        h(
          'td',
          { class: 'jp-brrr-kname', title: a.k.name },
          ellipsize(a.k.name, 400)
        ),
        h('td', { class: 'jp-brrr-num' }, a.k.stream),
        h('td', { class: 'jp-brrr-num' }, fmtInt(a.n)),
        h('td', { class: 'jp-brrr-num' }, fmtTime(a.t)),
        h(
          'td',
          { class: 'jp-brrr-num' },
          a.flops ? fmtSI(a.flops, '') : '\u2014'
        ),
        h(
          'td',
          { class: 'jp-brrr-num' },
          a.bytes ? fmtSI(a.bytes, 'B') : '\u2014'
        ),
        h('td', null, badge(a.k.bound))
      )
    );
  }
  table.appendChild(tb);
  box.appendChild(table);
  return box;
}

/** Render the operators view into a panel. */
export async function renderOperators(
  panel: HTMLElement,
  ctx: IViewContext
): Promise<void> {
  const { data } = ctx;
  const ops = data.ops;
  if (!ops.length) {
    panel.appendChild(
      emptyState(
        'No ops were recorded.',
        "The profiled code ran no PyTorch operators: profile code that calls PyTorch (a model's forward, tensor maths)."
      )
    );
    return;
  }
  const cpuOnly = data.cpuOnly || data.noGpuWork;
  const time = (o: IOpRow) => opTime(o, cpuOnly);
  const totalTime = ops.reduce((a, o) => a + time(o), 0);
  const drawChart = opsChart(panel, ctx, cpuOnly, time, totalTime);
  if (data.modules.length) {
    const treeSec = h('section', { class: 'jp-brrr-section' });
    treeSec.appendChild(heading('By module'));
    const total = cpuOnly ? totalTime : (data.span ?? totalTime);
    treeSec.appendChild(moduleTree(data.modules, cpuOnly, total));
    panel.appendChild(treeSec);
  }
  panel.appendChild(
    opsTable(ops, cpuOnly, o => data.kernelsByOp.get(o.name) ?? [])
  );
  await drawChart();
}

/**
 * The top-ops chart's section, added to the panel; the function that draws
 * the chart (again when the grouping changes).
 */
function opsChart(
  panel: HTMLElement,
  ctx: IViewContext,
  cpuOnly: boolean,
  time: (o: IOpRow) => number,
  totalTime: number
): () => Promise<void> {
  const ops = ctx.data.ops;
  const chartSec = h('section', { class: 'jp-brrr-section' });
  const groupSel = h(
    'select',
    {
      class: 'jp-brrr-select',
      data: { testid: 'brrr-groupby' },
      attrs: { 'aria-label': 'group by' }
    },
    h('option', { attrs: { value: 'op' } }, 'by op'),
    h('option', { attrs: { value: 'category' } }, 'by category'),
    h('option', { attrs: { value: 'module' } }, 'by module')
  );
  chartSec.appendChild(
    h(
      'div',
      { class: 'jp-brrr-toolbar' },
      heading(
        cpuOnly ? 'Top ops by self CPU time' : 'Top ops by self GPU time'
      ),
      h('span', { class: 'jp-brrr-spacer' }),
      groupSel
    )
  );
  const chartEl = h('div', {
    class: 'jp-brrr-chart',
    data: { testid: 'brrr-opbars' }
  });
  chartSec.appendChild(chartEl);
  panel.appendChild(chartSec);

  let chart: IChartHandle | null = null;
  const drawChart = async () => {
    const by = groupSel.value as 'op' | 'category' | 'module';
    const groups = groupOps(ops, by, time).slice(0, TOP_BARS);
    chart?.remove();
    chart = null;
    clear(chartEl);
    if (!groups.length) {
      chartEl.appendChild(
        emptyState(
          'No op time to chart.',
          'No op has a recorded time: the table below lists the ops and their calls.'
        )
      );
      return;
    }
    const present = new Set<string>();
    for (const g of groups) {
      for (const [b, v] of Object.entries(g.byBound)) {
        if (v > 0) {
          present.add(b);
        }
      }
    }
    chartEl.appendChild(colorLegend(BOUNDS.filter(b => present.has(b))));
    const plot = h('div');
    chartEl.appendChild(plot);
    const charts = await ctx.charts();
    chart = await charts.drawOpBars(
      plot,
      groups,
      totalTime,
      cpuOnly ? 'Self CPU time (ms)' : 'Self GPU time (ms)',
      ctx.theme()
    );
    ctx.track(chart);
  };
  groupSel.addEventListener('change', () => void drawChart());
  return drawChart;
}

/** The ops whose fields contain ``filter`` (any case), sorted by a column. */
function filterAndSort(
  ops: IOpRow[],
  filter: string,
  col: IColumn,
  descending: boolean
): IOpRow[] {
  const f = filter.trim().toLowerCase();
  const list = f
    ? ops.filter(
        o =>
          o.name.toLowerCase().includes(f) ||
          o.shapes.toLowerCase().includes(f) ||
          o.category.toLowerCase().includes(f) ||
          o.module.toLowerCase().includes(f) ||
          o.line.toLowerCase().includes(f) ||
          o.reason.toLowerCase().includes(f) ||
          o.bound.toLowerCase().includes(f)
      )
    : ops.slice();
  const dir = descending ? -1 : 1;
  return list.sort((a, b) => {
    const va = col.value(a);
    const vb = col.value(b);
    if (va === null || va === '') {
      return vb === null || vb === '' ? 0 : 1;
    }
    if (vb === null || vb === '') {
      return -1;
    }
    if (typeof va === 'number' && typeof vb === 'number') {
      return (va - vb) * dir;
    }
    return String(va).localeCompare(String(vb)) * dir;
  });
}

/**
 * The header row of the ops table: a sortable header cell per column, each
 * calling ``onSort`` with its key on a click, Enter or space.
 */
function sortableHead(
  cols: IColumn[],
  onSort: (c: IColumn) => void
): { thead: HTMLElement; ths: Map<string, HTMLElement> } {
  const thead = h('thead');
  const headRow = h('tr');
  const ths = new Map<string, HTMLElement>();
  for (const c of cols) {
    const th = h(
      'th',
      {
        class: `jp-brrr-sortable${c.num ? ' jp-brrr-num' : ''}`,
        title: `${c.title} (click to sort)`,
        data: { key: c.key },
        attrs: { tabindex: '0', role: 'columnheader' }
      },
      c.label
    );
    th.addEventListener('click', () => onSort(c));
    th.addEventListener('keydown', ev => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        onSort(c);
      }
    });
    ths.set(c.key, th);
    headRow.appendChild(th);
  }
  thead.appendChild(headRow);
  return { thead, ths };
}

/** One op's table row; a click or Enter calls ``toggle``. */
function opTableRow(
  o: IOpRow,
  cols: IColumn[],
  expanded: boolean,
  toggle: () => void
): HTMLElement {
  const tr = h('tr', {
    class: 'jp-brrr-op-row',
    data: { testid: 'brrr-op-row' },
    attrs: { tabindex: '0', 'aria-expanded': String(expanded) }
  });
  for (const c of cols) {
    const td = h(
      'td',
      {
        class: c.num ? 'jp-brrr-num' : `jp-brrr-col-${c.key}`
      },
      c.cell(o)
    );
    if (c.key === 'name') {
      td.title = [
        o.name,
        o.module ? `module: ${o.module}` : '',
        o.line ? `line: ${o.line}` : ''
      ]
        .filter(x => x)
        .join('\n');
      td.insertBefore(
        h('span', { class: 'jp-brrr-caret' }, expanded ? '\u25be' : '\u25b8'),
        td.firstChild
      );
    } else if (c.key === 'shapes') {
      td.title = `${o.shapes}${o.dtypes ? `\n${o.dtypes}` : ''}`;
    }
    tr.appendChild(td);
  }
  tr.addEventListener('click', toggle);
  tr.addEventListener('keydown', ev => {
    if (ev.key === 'Enter') {
      toggle();
    }
  });
  return tr;
}

/**
 * The ops table's section: sortable columns, a filter, a page of rows at a
 * time, and a row's kernels under it when it is opened.
 */
function opsTable(
  ops: IOpRow[],
  cpuOnly: boolean,
  kernelsFor: (o: IOpRow) => IKernelRow[]
): HTMLElement {
  const cols = columns(cpuOnly);
  let sortKey = cpuOnly ? 'self_cpu_time_s' : 'gpu_time_s';
  let sortDesc = true;
  let filter = '';
  let shown = PAGE_ROWS;
  const expanded = new Set<IOpRow>();

  const tableSec = h('section', { class: 'jp-brrr-section' });
  const filterBox = h('input', {
    class: 'jp-brrr-filter',
    data: { testid: 'brrr-filter' },
    attrs: {
      type: 'search',
      placeholder: 'Filter by name, shape, category, module or reason',
      'aria-label': 'filter ops'
    }
  });
  const count = h('span', {
    class: 'jp-brrr-muted',
    data: { testid: 'brrr-count' }
  });
  tableSec.appendChild(
    h(
      'div',
      { class: 'jp-brrr-toolbar' },
      heading('Operators'),
      h('span', { class: 'jp-brrr-spacer' }),
      count,
      filterBox
    )
  );
  const table = h('table', {
    class: 'jp-brrr-table jp-brrr-ops',
    data: { testid: 'brrr-ops-table' }
  });
  const { thead, ths } = sortableHead(cols, c => {
    if (sortKey === c.key) {
      sortDesc = !sortDesc;
    } else {
      sortKey = c.key;
      sortDesc = c.num;
    }
    shown = PAGE_ROWS;
    update();
  });
  table.appendChild(thead);
  const tbody = h('tbody');
  table.appendChild(tbody);
  const wrap = h('div', { class: 'jp-brrr-table-wrap' }, table);
  tableSec.appendChild(wrap);
  const moreBtn = h(
    'button',
    { class: 'jp-brrr-button', data: { testid: 'brrr-more' } },
    ''
  );
  tableSec.appendChild(moreBtn);

  function update(): void {
    for (const [key, th] of ths) {
      th.classList.toggle('jp-brrr-sorted', key === sortKey);
      th.dataset.sort = key === sortKey ? (sortDesc ? 'desc' : 'asc') : '';
      th.setAttribute(
        'aria-sort',
        key === sortKey ? (sortDesc ? 'descending' : 'ascending') : 'none'
      );
    }
    const col = cols.find(c => c.key === sortKey) ?? cols[0];
    const list = filterAndSort(ops, filter, col, sortDesc);
    clear(tbody);
    const n = Math.min(shown, list.length);
    const frag = document.createDocumentFragment();
    for (let i = 0; i < n; i++) {
      const o = list[i];
      const toggle = () => {
        if (expanded.has(o)) {
          expanded.delete(o);
        } else {
          expanded.add(o);
        }
        update();
      };
      frag.appendChild(opTableRow(o, cols, expanded.has(o), toggle));
      if (expanded.has(o)) {
        const td = h(
          'td',
          { attrs: { colspan: String(cols.length) } },
          kernelTable(o.name, kernelsFor(o))
        );
        frag.appendChild(
          h(
            'tr',
            { class: 'jp-brrr-detail', data: { testid: 'brrr-op-detail' } },
            td
          )
        );
      }
    }
    tbody.appendChild(frag);
    count.textContent =
      list.length === ops.length
        ? `${fmtInt(ops.length)} op rows`
        : `${fmtInt(list.length)} of ${fmtInt(ops.length)} op rows`;
    const rest = list.length - n;
    moreBtn.hidden = rest <= 0;
    moreBtn.textContent = `Show ${fmtInt(Math.min(PAGE_ROWS, rest))} more (${fmtInt(rest)} hidden)`;
  }

  moreBtn.addEventListener('click', () => {
    shown += PAGE_ROWS;
    update();
  });
  let timer = 0;
  filterBox.addEventListener('input', () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => {
      filter = filterBox.value;
      shown = PAGE_ROWS;
      update();
    }, 120);
  });

  update();
  return tableSec;
}

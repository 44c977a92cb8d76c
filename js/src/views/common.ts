/**
 * Pieces shared by the views: the context they render with, the stacked
 * split bar, legends, cards, data tables and the empty-state message.
 */

import type { IChartHandle, IChartTheme } from '../charts';
import { boundColor, COLORS, LABELS } from '../colors';
import { Child, h, IProps } from '../dom';
import { fmtPct, fmtTime } from '../format';
import type { ReportData } from '../model';

/** What a view renders with. */
export interface IViewContext {
  /** The report and its derived tables. */
  data: ReportData;
  /** Colours of the current JupyterLab theme for charts. */
  theme(): IChartTheme;
  /** The lazily loaded chart module (BokehJS). */
  charts(): Promise<typeof import('../charts')>;
  /** Keep a chart so that it is removed with the widget. */
  track(handle: IChartHandle): void;
}

/** A part of a split bar. */
export interface ISplitPart {
  /** Colour key: compute, memory, other or idle. */
  key: string;
  /** Time of the part. */
  seconds: number | null;
}

/**
 * One stacked horizontal bar with % labels inside wide enough segments.
 * `scale` (0..1) shortens the whole bar, to compare several spans.
 */
export function splitBar(
  parts: ISplitPart[],
  total: number | null,
  scale = 1,
  testid = 'brrr-split'
): HTMLElement {
  const bar = h('div', {
    class: 'jp-brrr-split',
    data: { testid },
    attrs: { role: 'img', 'aria-label': 'span split' }
  });
  const sum = parts.reduce((a, p) => a + (p.seconds ?? 0), 0);
  const denom = total && total > 0 ? Math.max(total, sum) : sum;
  const inner = h('div', {
    class: 'jp-brrr-split-inner',
    style: { width: `${Math.max(0, Math.min(1, scale)) * 100}%` }
  });
  bar.appendChild(inner);
  if (!denom) {
    inner.appendChild(h('div', { class: 'jp-brrr-split-none' }, 'no time'));
    return bar;
  }
  for (const p of parts) {
    const f = (p.seconds ?? 0) / denom;
    if (f <= 0) {
      continue;
    }
    const seg = h(
      'div',
      {
        class: `jp-brrr-split-seg jp-brrr-bg-${p.key}`,
        title: `${LABELS[p.key] ?? p.key}: ${fmtTime(p.seconds)} (${fmtPct(f)})`,
        data: { part: p.key },
        style: { width: `${f * 100}%`, background: COLORS[p.key] ?? '#888' }
      },
      f >= 0.07 ? fmtPct(f, 0) : ''
    );
    inner.appendChild(seg);
  }
  return bar;
}

/** A legend for the split: colour, name, time and share. */
export function splitLegend(
  parts: ISplitPart[],
  total: number | null
): HTMLElement {
  const el = h('div', { class: 'jp-brrr-legend' });
  for (const p of parts) {
    const f =
      total && total > 0 && p.seconds !== null ? p.seconds / total : null;
    el.appendChild(
      h(
        'span',
        { class: 'jp-brrr-legend-item', data: { part: p.key } },
        h('span', {
          class: 'jp-brrr-swatch',
          style: { background: COLORS[p.key] ?? '#888' }
        }),
        h('span', { class: 'jp-brrr-legend-name' }, LABELS[p.key] ?? p.key),
        h('span', { class: 'jp-brrr-legend-value' }, fmtTime(p.seconds)),
        h('span', { class: 'jp-brrr-legend-pct' }, fmtPct(f, 0))
      )
    );
  }
  return el;
}

/** A legend of colours and names only, for the keys given, in that order. */
export function colorLegend(keys: readonly string[]): HTMLElement {
  return h(
    'div',
    { class: 'jp-brrr-legend' },
    ...keys.map(k =>
      h(
        'span',
        { class: 'jp-brrr-legend-item', data: { part: k } },
        h('span', {
          class: 'jp-brrr-swatch',
          style: { background: boundColor(k) }
        }),
        h('span', { class: 'jp-brrr-legend-name' }, LABELS[k] ?? k)
      )
    )
  );
}

/**
 * A key figure: label, value, an optional meter (a fraction 0..1) and a
 * line of detail. `value` may be an element that the caller updates.
 */
export function card(
  label: string,
  value: Child,
  sub?: string | null,
  testid?: string,
  meter?: number | null
): HTMLElement {
  const el = h(
    'div',
    { class: 'jp-brrr-card', data: testid ? { testid } : undefined },
    h('div', { class: 'jp-brrr-card-label' }, label),
    h('div', { class: 'jp-brrr-card-value' }, value)
  );
  if (meter !== undefined && meter !== null && Number.isFinite(meter)) {
    el.appendChild(
      h(
        'div',
        { class: 'jp-brrr-meter' },
        h('div', {
          class: 'jp-brrr-meter-fill',
          style: { width: `${Math.min(1, Math.max(0, meter)) * 100}%` }
        })
      )
    );
  }
  if (sub) {
    el.appendChild(h('div', { class: 'jp-brrr-card-sub' }, sub));
  }
  return el;
}

/** A table column: its label, and whether it holds numbers (right-aligned). */
export type TableColumn = [label: string, num?: boolean];

/** A table head row; columns whose `num` flag is set are right-aligned numbers. */
export function tableHead(columns: TableColumn[]): HTMLElement {
  return h(
    'thead',
    null,
    h(
      'tr',
      null,
      ...columns.map(([label, num]) =>
        h('th', num ? { class: 'jp-brrr-num' } : null, label)
      )
    )
  );
}

/** A body cell with a class or tooltip of its own, beside its column's. */
export interface ITableCell {
  /** What the cell holds. */
  content: Child | Child[];
  /** Class names added to the column's. */
  class?: string;
  /** Tooltip text. */
  title?: string;
}

/** A body row: its cells in column order, and the row's own props. */
export interface ITableRow {
  /** One per column: plain content, or a cell with props of its own. */
  cells: (Child | ITableCell)[];
  /** The row's class, data-* attributes and tooltip. */
  props?: IProps | null;
}

function isTableCell(cell: Child | ITableCell): cell is ITableCell {
  return (
    typeof cell === 'object' &&
    cell !== null &&
    !('nodeType' in cell) &&
    'content' in cell
  );
}

/**
 * The props and children of a body cell: a number column's cells are
 * right-aligned as its head is, plus the cell's own class and tooltip.
 */
export function cellParts(
  column: TableColumn | undefined,
  cell: Child | ITableCell
): { props: IProps | null; children: Child[] } {
  const num = column?.[1] ?? false;
  const own = isTableCell(cell) ? cell : null;
  const content = own ? own.content : (cell as Child);
  const classes = [num ? 'jp-brrr-num' : '', own?.class ?? '']
    .filter(c => c)
    .join(' ');
  const props: IProps = {};
  if (classes) {
    props.class = classes;
  }
  if (own?.title !== undefined) {
    props.title = own.title;
  }
  return {
    props: Object.keys(props).length ? props : null,
    children: Array.isArray(content) ? content : [content]
  };
}

/** A body row of a table with these columns. */
export function tableRow(
  columns: TableColumn[],
  row: ITableRow
): HTMLTableRowElement {
  return h(
    'tr',
    row.props ?? null,
    ...row.cells.map((cell, i) => {
      const { props, children } = cellParts(columns[i], cell);
      return h('td', props, ...children);
    })
  );
}

/**
 * A data table: the head from `columns`, a body row per row; `compact`
 * tightens it, `testid` names it for tests. Its one body is
 * `table.tBodies[0]`, for views that refill it.
 */
export function dataTable(
  columns: TableColumn[],
  rows: ITableRow[],
  options: { testid?: string; compact?: boolean } = {}
): HTMLTableElement {
  return h(
    'table',
    {
      class: options.compact
        ? 'jp-brrr-table jp-brrr-compact'
        : 'jp-brrr-table',
      data: options.testid ? { testid: options.testid } : undefined
    },
    tableHead(columns),
    h('tbody', null, ...rows.map(row => tableRow(columns, row)))
  );
}

/** A "Notes" section listing plain-language caveats. */
export function notesSection(notes: string[], testid?: string): HTMLElement {
  return h(
    'section',
    { class: 'jp-brrr-section', data: testid ? { testid } : undefined },
    heading('Notes'),
    h('ul', { class: 'jp-brrr-notes' }, ...notes.map(n => h('li', null, n)))
  );
}

/** A clear message in place of a chart or table. */
export function emptyState(title: string, detail?: string): HTMLElement {
  return h(
    'div',
    { class: 'jp-brrr-empty', data: { testid: 'brrr-empty' } },
    h('div', { class: 'jp-brrr-empty-title' }, title),
    detail ? h('div', { class: 'jp-brrr-empty-detail' }, detail) : null
  );
}

/** A small coloured badge for a bound or bottleneck. */
export function badge(bound: string): HTMLElement {
  const key = bound in COLORS ? bound : 'unknown';
  return h(
    'span',
    {
      class: `jp-brrr-badge jp-brrr-badge-${key}`,
      style: { borderColor: COLORS[bound] ?? 'var(--jp-border-color1)' }
    },
    h('span', {
      class: 'jp-brrr-swatch',
      style: { background: COLORS[bound] ?? 'var(--jp-border-color1)' }
    }),
    bound
  );
}

/** A section heading. */
export function heading(text: string): HTMLElement {
  return h('h4', { class: 'jp-brrr-h' }, text);
}

/**
 * Change: a re-measure against the run before (or any two reports compared
 * with jupyter_brrr.diff): the span change with its noise verdict, the split,
 * the op categories and the ops side by side, each with the verdict the
 * noise rule gives it (jupyter_brrr/report/comparison.py), the earlier what-if
 * against the measurement, the target's plan, and the named cell's runs
 * over time.
 */

import type { IChartHandle, IChartTheme } from '../charts';
import { COLORS, LABELS } from '../colors';
import { h } from '../dom';
import { ellipsize, fmtInt, fmtPct, fmtTime, fmtX } from '../format';
import {
  amdahlRows,
  changeCategoryRows,
  changeCountRows,
  changeOpRows,
  changeSplitRows,
  IAmdahlRow,
  IChangeOpRow,
  IComparison,
  IComparisonSide,
  IHistoryRun,
  ITarget
} from '../schema';
import {
  card,
  dataTable,
  emptyState,
  heading,
  ITableRow,
  IViewContext,
  notesSection,
  splitBar,
  TableColumn,
  tableRow
} from './common';

/** What the change views need besides the data: chart theme, chart loading, cleanup. */
export interface IChangeContext {
  /** Colours of the current theme. */
  theme(): IChartTheme;
  /** Keep a chart so that it is removed with the widget. */
  track(handle: IChartHandle): void;
}

/** The parts of the split, in the order the tables list them. */
const PARTS = ['compute', 'memory', 'communication', 'other', 'idle'] as const;

/** Parts in words on a CPU (as comparison.py's CPU_PART_LABELS). */
const CPU_LABELS: { [part: string]: string } = {
  other: 'Time in torch ops',
  idle: 'Time outside torch ops'
};

/** Short part names for table heads. */
const SHORT: { [part: string]: string } = {
  compute: 'compute',
  memory: 'memory',
  communication: 'comm.',
  other: 'other',
  idle: 'idle'
};

const VERDICT_TEXT: { [verdict: string]: string } = {
  faster: 'faster',
  slower: 'slower',
  noise: 'within noise',
  uncertain: 'uncertain'
};

function partLabel(part: string, gpu: boolean): string {
  if (part === 'span') {
    return 'Span';
  }
  return (!gpu && CPU_LABELS[part]) || LABELS[part] || part;
}

/** A coloured verdict: faster (green), slower (red), noise (grey), uncertain (amber). */
export function verdictPill(verdict: string | null): HTMLElement {
  const v = verdict || '';
  return h(
    'span',
    {
      class: `jp-brrr-verdict jp-brrr-verdict-${v || 'none'}`,
      data: { verdict: v }
    },
    v ? (VERDICT_TEXT[v] ?? v) : '\u2014'
  );
}

/** A signed duration: "+1.2 ms", "\u22123 \u00b5s", "0". */
function fmtDelta(s: number | null): string {
  if (s === null || !Number.isFinite(s)) {
    return '\u2014';
  }
  if (s === 0) {
    return '0';
  }
  return `${s > 0 ? '+' : '\u2212'}${fmtTime(Math.abs(s))}`;
}

/** The span change in one line, as comparison.headline writes it. */
export function headline(c: IComparison): string {
  const sp = c.span;
  const times = `${fmtTime(sp.before_s)} \u2192 ${fmtTime(sp.after_s)} per run`;
  if (sp.speedup === null) {
    return `${VERDICT_TEXT[sp.verdict] ?? sp.verdict}: ${times}`;
  }
  const range =
    sp.low !== null && sp.high !== null
      ? ` (${fmtX(sp.low)}\u2013${fmtX(sp.high)})`
      : '';
  switch (sp.verdict) {
    case 'faster':
      return `${fmtX(sp.speedup)} faster${range}: ${times}`;
    case 'slower': {
      const slower =
        sp.low && sp.high
          ? ` (${fmtX(1 / sp.high)}\u2013${fmtX(1 / sp.low)})`
          : '';
      return `${fmtX(1 / sp.speedup)} slower${slower}: ${times}`;
    }
    case 'uncertain': {
      const way =
        sp.speedup >= 1
          ? `${fmtX(sp.speedup)} faster`
          : `${fmtX(1 / sp.speedup)} slower`;
      return `${way}, uncertain (no spread to judge the noise by): ${times}`;
    }
    default: {
      const change =
        sp.change ??
        (sp.before_s && sp.after_s ? sp.after_s / sp.before_s - 1 : 0);
      const pct = `${change >= 0 ? '+' : '\u2212'}${fmtPct(Math.abs(change))}`;
      return `within noise: ${pct}${range}, ${times}`;
    }
  }
}

/** A span card's detail: its timed runs, and the host CPU's speed while they ran. */
function runsDetail(
  runs: number | null,
  hostLoop: number | null
): string | null {
  if (!runs) {
    return null;
  }
  const host = hostLoop ? `; host loop ${fmtTime(hostLoop)}` : '';
  return `median of ${runs} timed runs${host}`;
}

function sideText(side: IComparisonSide): string {
  const name = side.name || side.label;
  return side.run !== null ? `${name} (run ${side.run})` : name;
}

function shareChange(a: number | null, b: number | null): string {
  return `${fmtPct(a, 0)} \u2192 ${fmtPct(b, 0)}`;
}

/** The split per run: two bars on one scale, and a table with each part's verdict. */
function splitSection(c: IComparison): HTMLElement {
  const rows = changeSplitRows(c);
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-change-split' }
  });
  sec.appendChild(heading('The split per run, before and after'));
  const byPart = new Map(rows.map(r => [r.part, r]));
  const span = byPart.get('span');
  const before = span?.before_s ?? c.span.before_s ?? 0;
  const after = span?.after_s ?? c.span.after_s ?? 0;
  const longest = Math.max(before, after);
  const grid = h('div', { class: 'jp-brrr-ab-splits' });
  for (const [label, side, total] of [
    [sideText(c.before), 'before', before],
    [sideText(c.after), 'after', after]
  ] as [string, 'before' | 'after', number][]) {
    grid.appendChild(h('div', { class: 'jp-brrr-ab-name' }, label));
    grid.appendChild(
      splitBar(
        PARTS.map(p => ({
          key: p,
          seconds: byPart.get(p)?.[`${side}_s`] ?? 0
        })),
        total,
        longest > 0 ? total / longest : 1,
        `brrr-change-bar-${side}`
      )
    );
    grid.appendChild(
      h('div', { class: 'jp-brrr-num jp-brrr-muted' }, fmtTime(total))
    );
  }
  sec.appendChild(grid);
  const partRows: ITableRow[] = rows
    .filter(r => r.part === 'span' || r.before_s || r.after_s)
    .map(r => {
      const isSpan = r.part === 'span';
      return {
        props: {
          data: { part: r.part },
          class: isSpan ? 'jp-brrr-row-total' : ''
        },
        cells: [
          {
            content: [
              isSpan
                ? null
                : h('span', {
                    class: 'jp-brrr-swatch',
                    style: { background: COLORS[r.part] ?? '#888' }
                  }),
              partLabel(r.part, c.gpu)
            ]
          },
          fmtTime(r.before_s),
          fmtTime(r.after_s),
          fmtDelta(r.delta_s),
          isSpan ? '' : shareChange(r.before_share, r.after_share),
          verdictPill(r.verdict || (isSpan ? c.span.verdict : ''))
        ]
      };
    });
  const countRows: ITableRow[] = changeCountRows(c)
    .filter(r => r.before !== null || r.after !== null)
    .map(r => {
      const delta =
        r.before !== null && r.after !== null ? r.after - r.before : null;
      return {
        props: { data: { count: r.what } },
        cells: [
          `${r.what}`,
          fmtInt(r.before),
          fmtInt(r.after),
          delta === null ? '\u2014' : `${delta > 0 ? '+' : ''}${fmtInt(delta)}`,
          '',
          null
        ]
      };
    });
  const table = dataTable(
    [
      ['per run'],
      ['before', true],
      ['after', true],
      ['change', true],
      ['share', true],
      ['verdict']
    ],
    [...partRows, ...countRows],
    { testid: 'brrr-change-split-table', compact: true }
  );
  sec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, table));
  return sec;
}

function categorySection(c: IComparison): HTMLElement | null {
  const rows = changeCategoryRows(c);
  if (!rows.length) {
    return null;
  }
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-change-categories' }
  });
  sec.appendChild(heading('By op category'));
  const table = dataTable(
    [
      ['category'],
      ['op rows', true],
      ['before', true],
      ['after', true],
      ['change', true],
      ['share', true],
      ['verdict']
    ],
    rows.map(r => ({
      props: {
        data: { category: r.category, verdict: r.verdict },
        class: 'jp-brrr-change-row'
      },
      cells: [
        { content: r.category || '(none)', class: 'jp-brrr-name' },
        fmtInt(r.ops),
        fmtTime(r.time_before_s),
        fmtTime(r.time_after_s),
        fmtDelta(r.delta_s),
        shareChange(r.share_before, r.share_after),
        verdictPill(r.verdict)
      ]
    })),
    { compact: true }
  );
  sec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, table));
  return sec;
}

type OpFilter = 'beyond' | 'noise' | 'all';

/** Whether an op's change is beyond noise (older comparisons: any op that moved). */
function beyondNoise(r: IChangeOpRow): boolean {
  if (r.verdict) {
    return r.verdict !== 'noise';
  }
  return r.status !== 'both' || (r.delta_s ?? 0) !== 0;
}

function opsSection(c: IComparison): HTMLElement | null {
  const rows = changeOpRows(c).sort(
    (a, b) => Math.abs(b.delta_s ?? 0) - Math.abs(a.delta_s ?? 0)
  );
  if (!rows.length) {
    return null;
  }
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-change-ops' }
  });
  const beyond = rows.filter(beyondNoise);
  const counts: { [f in OpFilter]: number } = {
    beyond: beyond.length,
    noise: rows.length - beyond.length,
    all: rows.length
  };
  const bar = h('div', { class: 'jp-brrr-toolbar' });
  bar.appendChild(heading('Ops, largest change first'));
  bar.appendChild(h('span', { class: 'jp-brrr-spacer' }));
  const buttons = new Map<OpFilter, HTMLButtonElement>();
  const labels: [OpFilter, string][] = [
    ['beyond', 'changed beyond noise'],
    ['noise', 'within noise'],
    ['all', 'all']
  ];
  for (const [f, label] of labels) {
    const b = h(
      'button',
      {
        class: 'jp-brrr-button jp-brrr-seg',
        data: { filter: f, testid: `brrr-change-filter-${f}` },
        attrs: { type: 'button' }
      },
      `${label} (${counts[f]})`
    );
    buttons.set(f, b);
    bar.appendChild(b);
  }
  sec.appendChild(bar);
  const columns: TableColumn[] = [
    ['op'],
    ['shapes'],
    ['category'],
    ['before', true],
    ['after', true],
    ['change', true],
    ['share', true],
    ['status'],
    ['verdict']
  ];
  const table = dataTable(columns, [], {
    testid: 'brrr-change-ops-table',
    compact: true
  });
  table.classList.add('jp-brrr-change-ops'); // its key columns in 1000 px (base.css)
  const tb = table.tBodies[0];
  const wrap = h('div', { class: 'jp-brrr-table-wrap' }, table);
  sec.appendChild(wrap);
  const total = c.ops.total ?? rows.length;
  const caption = h('div', { class: 'jp-brrr-muted jp-brrr-caption' });
  sec.appendChild(caption);

  const show = (f: OpFilter) => {
    for (const [k, b] of buttons) {
      b.classList.toggle('jp-mod-active', k === f);
      b.setAttribute('aria-pressed', String(k === f));
    }
    sec.dataset.filter = f;
    const list =
      f === 'beyond'
        ? beyond
        : f === 'noise'
          ? rows.filter(r => !beyondNoise(r))
          : rows;
    tb.replaceChildren(
      ...list.map(r =>
        tableRow(columns, {
          props: {
            class: `jp-brrr-change-row jp-brrr-status-${r.status}`,
            data: {
              testid: 'brrr-change-op',
              verdict: r.verdict,
              status: r.status
            }
          },
          cells: [
            {
              content: ellipsize(r.name, 60),
              class: 'jp-brrr-name',
              title: r.name
            },
            {
              content: ellipsize(r.shapes, 48),
              class: 'jp-brrr-shapes',
              title: `${r.shapes} ${r.dtypes}`
            },
            r.category,
            fmtTime(r.time_before_s),
            fmtTime(r.time_after_s),
            fmtDelta(r.delta_s),
            shareChange(r.share_before, r.share_after),
            { content: r.status, class: `jp-brrr-op-status-${r.status}` },
            verdictPill(r.verdict)
          ]
        })
      )
    );
    const parts = [
      `${list.length} of ${fmtInt(total)} op rows`,
      'an op is timed in one profiled run per side: its change is within noise when under 5% of its own time, under 1% of the span, or within the spread of the timed runs'
    ];
    if (total > rows.length) {
      parts.push(`the report keeps the ${rows.length} largest`);
    }
    caption.textContent = parts.join('; ') + '.';
  };
  for (const [f, b] of buttons) {
    b.addEventListener('click', () => show(f));
  }
  show(counts.beyond ? 'beyond' : 'all');
  return sec;
}

/** A predicted speed-up's likely range, where it is not a point (views/change.py's). */
function likelyX(r: IAmdahlRow): string {
  const low = r.predicted_low;
  const high = r.predicted_high;
  if (low === null || high === null || !(high > low * 1.005)) {
    return '';
  }
  return `, likely ${low.toFixed(2)}-${high.toFixed(2)}x`;
}

function amdahlSection(c: IComparison): HTMLElement | null {
  const rows = amdahlRows(c);
  if (!rows.length) {
    return null;
  }
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-change-amdahl' }
  });
  sec.appendChild(
    heading('Amdahl check: the earlier what-if against the measurement')
  );
  const table = dataTable(
    [
      ['what got faster'],
      ['share before', true],
      ['its speed-up', true],
      ['predicted overall', true],
      ['measured overall', true],
      ['at best', true]
    ],
    rows.map(r => ({
      cells: [
        {
          content: r.kind === 'part' ? partLabel(r.part, c.gpu) : r.part,
          class: 'jp-brrr-name'
        },
        fmtPct(r.share_before, 0),
        r.time_after_s === 0 ? 'gone' : fmtX(r.part_speedup),
        `${fmtX(r.predicted_speedup)}${likelyX(r)} (${fmtTime(r.predicted_span_s)})`,
        fmtX(r.measured_speedup),
        fmtX(r.limit)
      ]
    })),
    { compact: true }
  );
  sec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, table));
  return sec;
}

/** The comparison itself: headline, shift, warnings, split, categories, ops, Amdahl. */
export function renderComparison(
  panel: HTMLElement,
  c: IComparison,
  title: string
): void {
  const sp = c.span;
  const head = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-change' }
  });
  head.appendChild(heading(title));
  head.appendChild(
    h(
      'div',
      {
        class: `jp-brrr-change-headline jp-brrr-verdict-${sp.verdict}`,
        data: { testid: 'brrr-change-headline', verdict: sp.verdict }
      },
      verdictPill(sp.verdict),
      ' ',
      headline(c)
    )
  );
  if (sp.reason) {
    head.appendChild(
      h('div', { class: 'jp-brrr-muted jp-brrr-caption' }, `Why: ${sp.reason}.`)
    );
  }
  const cards = h('div', { class: 'jp-brrr-cards' });
  cards.appendChild(
    card(
      `span, ${sideText(c.before)}`,
      fmtTime(sp.before_s),
      runsDetail(sp.runs_before, sp.host_before_s),
      'brrr-change-before'
    )
  );
  cards.appendChild(
    card(
      `span, ${sideText(c.after)}`,
      fmtTime(sp.after_s),
      runsDetail(sp.runs_after, sp.host_after_s),
      'brrr-change-after'
    )
  );
  cards.appendChild(
    card(
      'speed-up',
      fmtX(sp.speedup),
      sp.low !== null && sp.high !== null
        ? `range ${fmtX(sp.low)}\u2013${fmtX(sp.high)}`
        : 'no range: too few timed runs',
      'brrr-change-speedup'
    )
  );
  head.appendChild(cards);
  if (c.shift.length) {
    head.appendChild(
      h(
        'ul',
        { class: 'jp-brrr-notes', data: { testid: 'brrr-change-shift' } },
        ...c.shift.map(s => h('li', null, s))
      )
    );
  }
  if (c.warnings.length) {
    head.appendChild(
      h(
        'div',
        { class: 'jp-brrr-banner', data: { testid: 'brrr-change-warnings' } },
        h('b', null, 'Not like for like: '),
        h('ul', null, ...c.warnings.map(w => h('li', null, w)))
      )
    );
  }
  panel.appendChild(head);
  panel.appendChild(splitSection(c));
  for (const sec of [categorySection(c), opsSection(c), amdahlSection(c)]) {
    if (sec) {
      panel.appendChild(sec);
    }
  }
  if (c.notes.length) {
    panel.appendChild(notesSection(c.notes));
  }
}

/** The target's plan: the goal, the gap and what can close it. */
function targetSection(t: ITarget, span: number | null): HTMLElement {
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-target', met: String(t.met) }
  });
  sec.appendChild(heading(`Target: ${t.goal.text}`));
  const now = t.span_s ?? span;
  const goal = t.goal.span_s;
  const cards = h('div', { class: 'jp-brrr-cards' });
  cards.appendChild(
    card(
      'now',
      fmtTime(now),
      t.rate !== null ? `${fmtInt(t.rate)} items/s` : 'per run',
      'brrr-target-now'
    )
  );
  cards.appendChild(
    card(
      'goal',
      fmtTime(goal),
      t.goal.kind === 'throughput'
        ? `${t.goal.text} as a span per run`
        : 'per run',
      'brrr-target-goal',
      // How far along: the goal over where it stands (1 when met).
      now && goal ? Math.min(1, goal / now) : null
    )
  );
  cards.appendChild(
    card(
      t.met ? 'met' : 'gap',
      t.met ? '\u2713' : fmtTime(t.gap_s),
      t.met ? 'the span meets the goal' : `needs ${fmtX(t.speedup_needed)}`,
      'brrr-target-gap'
    )
  );
  sec.appendChild(cards);
  if (t.lines.length) {
    sec.appendChild(
      h(
        'div',
        {
          class: `jp-brrr-target-headline ${t.met ? 'jp-brrr-good' : 'jp-brrr-bad'}`,
          data: { testid: 'brrr-target-headline' }
        },
        t.lines[0]
      )
    );
    if (t.lines.length > 1) {
      sec.appendChild(
        h(
          'ul',
          { class: 'jp-brrr-notes' },
          ...t.lines.slice(1).map(l => h('li', null, l))
        )
      );
    }
  }
  if (t.notes.length) {
    sec.appendChild(
      h(
        'ul',
        { class: 'jp-brrr-notes jp-brrr-muted' },
        ...t.notes.map(n => h('li', null, n))
      )
    );
  }
  return sec;
}

/**
 * The named cell's runs: a chart of span and split per run, and a table (the
 * Change tab's, and a history's own view: tabs.ts HISTORY_TABS).
 */
export async function historySection(
  runs: IHistoryRun[],
  goal: number | null,
  ctx: IChangeContext,
  sec: HTMLElement
): Promise<void> {
  sec.appendChild(heading(`Runs of this name (${runs.length})`));
  const chartEl = h('div', {
    class: 'jp-brrr-chart',
    data: { testid: 'brrr-history-chart', runs: String(runs.length) }
  });
  sec.appendChild(chartEl);
  sec.appendChild(
    h(
      'div',
      { class: 'jp-brrr-muted jp-brrr-caption' },
      `Each bar is one run's span per run, split by part; the line joins the spans (filled green: faster than the run before beyond noise, red: slower)${
        goal ? '; the dashed line is the target' : ''
      }. Hover a run for its settings.`
    )
  );
  const charts = await import('../charts_runs');
  const table = dataTable(
    [
      ['run', true],
      ['when (UTC)'],
      ['span', true],
      ['vs previous'],
      ...PARTS.map(p => [SHORT[p] ?? p, true] as TableColumn),
      ['kernels', true],
      ['code'],
      ['settings']
    ],
    [...runs].reverse().map(r => ({
      props: { data: { run: String(r.run), verdict: r.verdict ?? '' } },
      cells: [
        String(r.run),
        (r.created ?? '').slice(0, 19).replace('T', ' '),
        fmtTime(r.span_s),
        {
          content: charts.versusText(r),
          class: `jp-brrr-verdict-text-${r.verdict ?? 'none'}`
        },
        ...PARTS.map(p =>
          fmtPct(r.span_s ? (r[`${p}_s`] ?? 0) / r.span_s : null, 0)
        ),
        fmtInt(r.kernel_count),
        r.code_changed === null ? '' : r.code_changed ? 'changed' : 'same',
        { content: r.settings, class: 'jp-brrr-muted' }
      ]
    })),
    { testid: 'brrr-history-table', compact: true }
  );
  sec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, table));
  ctx.track(await charts.drawHistory(chartEl, runs, goal, ctx.theme()));
}

/** Render the Change view of a report: its change, target and history. */
export async function renderChange(
  panel: HTMLElement,
  ctx: IViewContext
): Promise<void> {
  const r = ctx.data.report;
  const change = r.change ?? null;
  const history = r.history ?? [];
  const target = r.target ?? null;
  if (!change && !target && history.length === 0) {
    panel.appendChild(
      emptyState(
        'Nothing to compare with yet.',
        'Name the cell (%%brrr --name attention) and run it again after a change: this tab shows what changed, and the runs over time.'
      )
    );
    return;
  }
  if (change) {
    renderComparison(panel, change, `Change since ${sideText(change.before)}`);
  } else if (history.length) {
    panel.appendChild(
      h(
        'div',
        {
          class: 'jp-brrr-muted jp-brrr-caption',
          data: { testid: 'brrr-change-first' }
        },
        'The first run of this name: run the cell again after a change to see what changed.'
      )
    );
  }
  if (target) {
    panel.appendChild(targetSection(target, ctx.data.span));
  }
  if (history.length) {
    const sec = h('section', {
      class: 'jp-brrr-section',
      data: { testid: 'brrr-history' }
    });
    panel.appendChild(sec);
    await historySection(history, target?.goal.span_s ?? null, ctx, sec);
  }
}

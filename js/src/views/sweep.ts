/**
 * Sweep: the same code at growing sizes. Time per step against size on
 * log-log axes with the flat (overhead) and slope-1 (saturated) guides,
 * throughput against size, the split per size, the verdict per doubling,
 * and the largest size that fits each GPU.
 */

import { sweepGuides, sweepPoints, splitShares } from '../chart_data';
import { COLORS, LABELS } from '../colors';
import { h } from '../dom';
import {
  fmtBytes,
  fmtInt,
  fmtPct,
  fmtSI,
  fmtTime,
  fmtX,
  NOMINAL_MEMORY,
  REACHABLE_MEMORY
} from '../format';
import { SPLIT_KEYS } from '../model';
import { tableRows } from '../schema';
import type { ISweep } from '../schema';
import {
  colorLegend,
  dataTable,
  emptyState,
  heading,
  IViewContext,
  notesSection
} from './common';

interface IPoint {
  size: number;
  status: string;
  span_s: number | null;
  items_per_s: number | null;
  peak_memory_bytes: number | null;
  error: string | null;
  [key: string]: unknown;
}

interface IDoubling {
  from_size: number;
  to_size: number;
  per_doubling: number | null;
  verdict: string | null;
  why: string | null;
}

interface ICapacityRow {
  device: string;
  capacity_bytes: number | null;
  largest_size: number | null;
  this_gpu: boolean | null;
}

const VERDICT_COLORS: { [key: string]: string } = {
  overhead: COLORS.idle ?? '#d65f5f',
  fixed: '#72b7b2',
  transition: '#9467bd',
  compute: COLORS.compute ?? '#4c78c8',
  memory: COLORS.memory ?? '#e8833a',
  saturated: '#54a24b',
  superlinear: '#c62828'
};

/** The sweep in one sentence: sizes measured, why it stopped, knee and best. */
function sweepSummary(sweep: ISweep, measured: number): HTMLElement {
  const v = sweep.variable;
  const head = h('section', { class: 'jp-brrr-section' });
  const stop: { [key: string]: string } = {
    oom: `stopped by OOM at ${v}=${sweep.oom_at}`,
    budget: 'stopped at the time budget',
    cancelled: 'cancelled',
    error: 'stopped by an error'
  };
  head.appendChild(
    h(
      'div',
      { data: { testid: 'brrr-sweep-summary' } },
      `Sweep of ${v} on ${sweep.device}: ${measured} sizes measured` +
        (sweep.elapsed_s !== null
          ? ` in ${sweep.elapsed_s.toFixed(1)} s`
          : '') +
        (stop[sweep.stopped] ? `, ${stop[sweep.stopped]}` : '') +
        (sweep.knee !== null ? `; knee at ${v}=${sweep.knee}` : '') +
        (sweep.best !== null ? `; best ${v}=${sweep.best}` : '') +
        '.'
    )
  );
  return head;
}

/** The sweep's tables: per doubling, the sizes, and the largest size that fits. */
function sweepTables(
  sweep: ISweep,
  points: IPoint[],
  doublings: IDoubling[]
): HTMLElement[] {
  const v = sweep.variable;
  const tables: HTMLElement[] = [];
  if (doublings.length) {
    const sec = h('section', { class: 'jp-brrr-section' });
    sec.appendChild(heading('Per doubling'));
    sec.appendChild(
      dataTable(
        [[v], ['time per doubling', true], ['verdict'], ['why']],
        doublings.map(d => {
          const verdict = d.verdict ?? '';
          return {
            props: { data: { verdict } },
            cells: [
              `${d.from_size} \u2192 ${d.to_size}`,
              fmtX(d.per_doubling),
              h(
                'b',
                { style: { color: VERDICT_COLORS[verdict] ?? 'inherit' } },
                verdict
              ),
              d.why ?? ''
            ]
          };
        }),
        { testid: 'brrr-sweep-doublings' }
      )
    );
    tables.push(sec);
  }

  const sizes = h('section', { class: 'jp-brrr-section' });
  sizes.appendChild(heading('Sizes'));
  sizes.appendChild(
    dataTable(
      [
        [v, true],
        ['status'],
        ['time per step', true],
        ['items/s', true],
        ['peak memory', true]
      ],
      points.map(p => ({
        props: { data: { status: p.status } },
        cells: [
          fmtInt(p.size),
          { content: p.status, title: p.error ?? '' },
          fmtTime(p.span_s),
          fmtSI(p.items_per_s, '/s'),
          p.peak_memory_bytes !== null
            ? fmtBytes(p.peak_memory_bytes)
            : '\u2014'
        ]
      })),
      { testid: 'brrr-sweep-points' }
    )
  );
  tables.push(sizes);

  // This GPU's row is the memory this process can reach; the datasheet row of the same board
  // is left out (views/sweep_memory.py capacity_rows).
  const allRows = tableRows<ICapacityRow>(sweep.capacity);
  const here = new Set(
    allRows
      .filter(c => c.this_gpu)
      .map(c => c.device.replace(/ \(this GPU\)$/, ''))
  );
  const capacity = allRows.filter(c => c.this_gpu || !here.has(c.device));
  if (capacity.length) {
    const sec = h('section', { class: 'jp-brrr-section' });
    sec.appendChild(heading(`Largest ${v} that fits`));
    if (sweep.fit) {
      sec.appendChild(
        h(
          'div',
          { class: 'jp-brrr-muted' },
          `Peak memory \u2248 ${fmtBytes(sweep.fit.fixed_bytes)} + ${fmtBytes(sweep.fit.per_item_bytes)} per ${v} (${sweep.fit.kind} fit, within ${fmtPct(sweep.fit.max_miss)} of the measured peaks).`
        )
      );
    }
    sec.appendChild(
      dataTable(
        [['GPU'], ['memory', true], [v, true]],
        capacity.map(c => ({
          props: { class: c.this_gpu ? 'jp-brrr-row-this' : '' },
          cells: [
            c.device,
            `${fmtBytes(c.capacity_bytes)} ${c.this_gpu ? REACHABLE_MEMORY : NOMINAL_MEMORY}`,
            fmtInt(c.largest_size)
          ]
        })),
        { testid: 'brrr-sweep-capacity' }
      )
    );
    tables.push(sec);
  }
  return tables;
}

/** Render the Sweep view into a panel. */
export async function renderSweep(
  panel: HTMLElement,
  ctx: IViewContext
): Promise<void> {
  const sweep = ctx.data.report.sweep;
  if (!sweep) {
    panel.appendChild(
      emptyState(
        'No sweep in this report.',
        'Run one with %%brrr --sweep batch=8..512 or jupyter_brrr.sweep(step, sizes).'
      )
    );
    return;
  }
  const v = sweep.variable;
  const points = tableRows<IPoint>(sweep.points);
  const ok = points.filter(p => p.status === 'ok' && (p.span_s ?? 0) > 0);
  const doublings = tableRows<IDoubling>(sweep.doublings);

  panel.appendChild(sweepSummary(sweep, ok.length));

  // The charts (BokehJS) are drawn once the tables are in place.
  const chartBox = (testid: string) =>
    h('div', { class: 'jp-brrr-chart', data: { testid } });
  const timeEl = chartBox('brrr-sweep-time');
  const throughputEl = chartBox('brrr-sweep-throughput');
  const splitEl = chartBox('brrr-sweep-split');
  panel.appendChild(
    h('div', { class: 'jp-brrr-sweep-charts' }, timeEl, throughputEl, splitEl)
  );
  panel.appendChild(colorLegend(SPLIT_KEYS.filter(k => LABELS[k])));
  panel.appendChild(
    h(
      'div',
      { class: 'jp-brrr-muted jp-brrr-caption' },
      'Dashed: the flat guide (overhead: the time does not grow with the size) and the slope-1 guide (saturated: the time doubles with the size). Each marker is filled in the colour of the verdict of the doubling that reached its size (the table below); hover it for the numbers.'
    )
  );

  for (const table of sweepTables(sweep, points, doublings)) {
    panel.appendChild(table);
  }
  if (sweep.notes.length) {
    panel.appendChild(notesSection(sweep.notes, 'brrr-sweep-notes'));
  }

  const measured = sweepPoints(sweep);
  if (!measured.length) {
    timeEl.appendChild(
      emptyState(
        'No size was measured.',
        'Every size of this sweep failed or was skipped: the Sizes table says why.'
      )
    );
    return;
  }
  const charts = await import('../charts_sweep');
  const theme = ctx.theme();
  ctx.track(
    await charts.drawSweepTime(
      timeEl,
      measured,
      sweepGuides(sweep),
      v,
      VERDICT_COLORS,
      theme
    )
  );
  ctx.track(await charts.drawSweepThroughput(throughputEl, measured, v, theme));
  ctx.track(
    await charts.drawSweepSplit(
      splitEl,
      ok.map(p => p.size),
      splitShares(ok),
      v,
      theme
    )
  );
}

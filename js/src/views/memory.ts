/**
 * Memory: what held the peak. The timeline by category (stacked) against
 * the capacity, the breakdown at the peak, the largest allocations with the
 * op and line that made them, and the capacity advice.
 */

import { memorySteps } from '../chart_data';
import { h } from '../dom';
import { fmtBytes, fmtPct, fmtTime, REACHABLE_MEMORY } from '../format';
import { tableRows } from '../schema';
import {
  dataTable,
  emptyState,
  heading,
  IViewContext,
  notesSection
} from './common';

/** One colour per memory category (as views/sweep.py's MEMORY_COLOURS). */
export const MEMORY_COLORS: { [key: string]: string } = {
  parameters: '#4c78c8',
  gradients: '#72b7b2',
  optimizer_state: '#54a24b',
  activations: '#e8833a',
  temporaries: '#f2cf5b',
  inputs: '#b279a2',
  autograd_detail: '#ff9da6',
  unknown: '#9d755d',
  held_before: '#bab0ac'
};

interface ILargest {
  bytes: number | null;
  category: string | null;
  op: string | null;
  line: string | null;
}

/** Render the Memory view into a panel. */
export async function renderMemory(
  panel: HTMLElement,
  ctx: IViewContext
): Promise<void> {
  const mem = ctx.data.report.memory;
  if (!mem) {
    panel.appendChild(
      emptyState(
        'No memory breakdown in this report.',
        'Add --memory to %%brrr, or call jupyter_brrr.memory_breakdown(fn).'
      )
    );
    return;
  }
  const peak = mem.peak_bytes ?? 0;
  panel.appendChild(
    h(
      'div',
      { class: 'jp-brrr-section', data: { testid: 'brrr-memory-summary' } },
      `Peak ${fmtBytes(peak)} on ${mem.device} at ${fmtTime(mem.peak_time_s)}` +
        (mem.capacity_bytes
          ? ` of ${fmtBytes(mem.capacity_bytes)} ${REACHABLE_MEMORY}`
          : '') +
        '.'
    )
  );
  const t = mem.timeline;
  const capacity = mem.capacity_bytes;
  // The capacity line only where it does not flatten the timeline.
  const shown = capacity && peak >= 0.25 * capacity ? capacity : null;
  const chartEl = h('div', {
    class: 'jp-brrr-chart',
    data: { testid: 'brrr-memory-timeline' }
  });
  panel.appendChild(chartEl);
  panel.appendChild(
    h(
      'div',
      { class: 'jp-brrr-muted jp-brrr-caption' },
      'Memory by category over the run, stacked' +
        (t.allocated.length === t.times_s.length
          ? '; the line is the allocator\u2019s total'
          : '') +
        (shown ? '; the dashed line is the capacity' : '') +
        (capacity && !shown
          ? ` (the capacity, ${fmtBytes(capacity)}, is far above)`
          : '') +
        '. Hover an area for its bytes.'
    )
  );

  const sec = h('section', { class: 'jp-brrr-section' });
  sec.appendChild(heading('At the peak'));
  const parts = Object.entries(mem.at_peak)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1]);
  parts.push(['unattributed', mem.unattributed_bytes ?? 0]);
  sec.appendChild(
    dataTable(
      [['category'], ['bytes', true], ['share', true]],
      parts.map(([name, bytes]) => ({
        props: { data: { category: name } },
        cells: [
          {
            content: [
              h('span', {
                class: 'jp-brrr-swatch',
                style: { background: MEMORY_COLORS[name] ?? 'transparent' }
              }),
              ` ${name.replace(/_/g, ' ')}`
            ]
          },
          fmtBytes(bytes),
          peak ? fmtPct(bytes / peak) : '\u2014'
        ]
      })),
      { testid: 'brrr-memory-breakdown' }
    )
  );
  panel.appendChild(sec);

  const largest = tableRows<ILargest>(mem.largest);
  if (largest.length) {
    const ls = h('section', { class: 'jp-brrr-section' });
    ls.appendChild(heading('Largest allocations at the peak'));
    ls.appendChild(
      dataTable(
        [['size', true], ['category'], ['made by'], ['line']],
        largest.map(r => ({
          cells: [
            fmtBytes(r.bytes),
            (r.category ?? '').replace(/_/g, ' '),
            r.op ?? 'there before the run',
            r.line ?? ''
          ]
        })),
        { testid: 'brrr-memory-largest' }
      )
    );
    panel.appendChild(ls);
  }
  if (mem.advice.length) {
    const as = h('section', {
      class: 'jp-brrr-section',
      data: { testid: 'brrr-memory-advice' }
    });
    as.appendChild(heading('Capacity'));
    as.appendChild(
      h(
        'ul',
        { class: 'jp-brrr-notes' },
        ...mem.advice.map(a => h('li', null, a))
      )
    );
    panel.appendChild(as);
  }
  if (mem.notes.length) {
    panel.appendChild(notesSection(mem.notes, 'brrr-memory-notes'));
  }

  if (t.times_s.length < 2) {
    chartEl.appendChild(
      emptyState(
        'No memory timeline to show.',
        'The run recorded fewer than two moments of allocation.'
      )
    );
    return;
  }
  const charts = await import('../charts_sweep');
  ctx.track(
    await charts.drawMemoryTimeline(
      chartEl,
      memorySteps(t),
      { times: t.times_s, allocated: t.allocated, capacity: shown },
      MEMORY_COLORS,
      ctx.theme()
    )
  );
}

/**
 * Roofline: achieved FLOP/s against arithmetic intensity, with the device's
 * bandwidth and compute ceilings.
 */

import { h } from '../dom';
import { fmtInt } from '../format';
import { emptyState, IViewContext } from './common';

/** Render the roofline view into a panel. */
export async function renderRoofline(
  panel: HTMLElement,
  ctx: IViewContext
): Promise<void> {
  const { data } = ctx;
  if (data.cpuOnly) {
    const { title, detail } = data.noGpuMessage;
    panel.appendChild(
      emptyState(title, `A roofline needs GPU kernels. ${detail}`)
    );
    return;
  }
  const ops = data.ops;
  const plotted = data.roofOps;
  if (!plotted.length) {
    panel.appendChild(
      emptyState(
        'Nothing to place on the roofline.',
        ops.length
          ? 'No op with GPU time has a FLOP and byte count (no cost model for these ops): the Operators tab has their times.'
          : 'No ops were recorded in this cell: profile code that calls PyTorch on the GPU.'
      )
    );
    return;
  }
  const spec = data.roofline;
  if (!spec && data.olderVersion) {
    panel.appendChild(
      emptyState(
        'This report was saved by an older jupyter_brrr.',
        `It carries no roofline geometry (report version ${data.report.version}; jupyter_brrr computes it since version 2). ` +
          'To draw it, rewrite the saved notebook: python -m jupyter_brrr upgrade NOTEBOOK.ipynb (or run the cell again). ' +
          'The Operators tab has the same ops with their FLOP/s and bytes/s.'
      )
    );
    return;
  }
  const peaks = data.report.summary.peaks;
  const info = h('div', { class: 'jp-brrr-muted jp-brrr-caption' });
  const parts: string[] = [];
  if (peaks && (peaks.bandwidth || Object.keys(peaks.flops).length)) {
    const p = peaks.device ?? data.report.summary.device ?? 'this device';
    const src = peaks.measured
      ? 'measured on this GPU'
      : (peaks.source ?? 'unknown source');
    parts.push(`Ceilings: peaks of ${p} (${src})`);
  } else {
    parts.push('No device peaks in this report: no ceilings drawn');
  }
  parts.push(
    `${fmtInt(plotted.length)} of ${fmtInt(ops.length)} op rows placed, sized by GPU time ` +
      '(ops without a FLOP and byte count are left out)'
  );
  info.textContent = parts.join('. ') + '.';
  const chartEl = h('div', {
    class: 'jp-brrr-chart',
    data: { testid: 'brrr-roofline' }
  });
  panel.appendChild(chartEl);
  panel.appendChild(info);
  if (!spec) {
    throw new Error('this report has no roofline geometry for its ops');
  }
  const charts = await ctx.charts();
  ctx.track(await charts.drawRoofline(chartEl, plotted, spec, ctx.theme()));
}

/**
 * The renderers of the two documents that stand beside a report: a job
 * report (the ranks of one torch.distributed run: Ranks and Timeline tabs)
 * and a comparison of two measurements (jupyter_brrr.diff, %brrr diff).
 * Like the report widget they draw from data only and set every string as
 * text; views are drawn when their tab is first opened.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { themeOf } from './charts';
import type { IChartHandle, IChartTheme } from './charts';
import { clear, h, showViewError } from './dom';
import { parseComparison, parseJob, ReportError } from './schema';
import { renderComparison } from './views/change';
import { IJobContext, renderRankTimeline, renderRanks } from './views/ranks';

/** One tab: its id, label and how to draw its panel. */
interface ITab {
  id: string;
  label: string;
  render: (panel: HTMLElement) => void | Promise<void>;
}

/** A widget with a header and tabs, drawn from one MIME bundle entry. */
abstract class TabbedDocument extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this.mimeType = options.mimeType;
    this.addClass('jp-brrr');
    // Charts are drawn on canvas in the theme's colours read at draw time:
    // redraw when JupyterLab switches theme (it sets these body attributes).
    this.themeObserver = new MutationObserver(() => {
      const theme = document.body.dataset.jpThemeName ?? '';
      if (theme !== this.themeName && this.model) {
        this.themeName = theme;
        void this.renderModel(this.model);
      }
    });
    this.themeObserver.observe(document.body, {
      attributes: true,
      attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light']
    });
  }

  /** Parse the data and return the header and tabs; throw a ReportError when unreadable. */
  protected abstract build(data: unknown): {
    title: string;
    chips: string[];
    tabs: ITab[];
  };

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.model = model;
    this.themeName = document.body.dataset.jpThemeName ?? '';
    this.removeCharts();
    const generation = ++this.generation;
    const node = this.node;
    clear(node);
    node.dataset.state = 'rendering';
    let built: { title: string; chips: string[]; tabs: ITab[] };
    try {
      built = this.build(model.data[this.mimeType]);
    } catch (err) {
      node.appendChild(
        h(
          'div',
          { class: 'jp-brrr-error', data: { testid: 'brrr-error' } },
          err instanceof ReportError || err instanceof Error
            ? err.message
            : String(err)
        )
      );
      node.dataset.state = 'error';
      return;
    }
    node.appendChild(
      h(
        'div',
        { class: 'jp-brrr-header' },
        h('span', { class: 'jp-brrr-logo' }, 'brrr'),
        h('span', { class: 'jp-brrr-title', title: built.title }, built.title),
        h(
          'span',
          { class: 'jp-brrr-chips' },
          ...built.chips.map(c => h('span', { class: 'jp-brrr-chip' }, c))
        )
      )
    );
    const bar = h('div', {
      class: 'jp-brrr-tabs',
      attrs: { role: 'tablist', 'data-lm-suppress-shortcuts': 'true' }
    });
    const body = h('div', { class: 'jp-brrr-body' });
    node.appendChild(bar);
    node.appendChild(body);
    const buttons = new Map<string, HTMLButtonElement>();
    const panels = new Map<string, HTMLElement>();
    const drawn = new Set<string>();
    const activate = async (id: string): Promise<void> => {
      for (const [tid, b] of buttons) {
        const on = tid === id;
        b.classList.toggle('jp-mod-active', on);
        b.setAttribute('aria-selected', String(on));
        panels.get(tid)!.hidden = !on;
      }
      node.dataset.activeTab = id;
      if (drawn.has(id)) {
        return;
      }
      drawn.add(id);
      const panel = panels.get(id)!;
      panel.dataset.state = 'rendering';
      try {
        await built.tabs.find(t => t.id === id)!.render(panel);
        if (generation === this.generation) {
          panel.dataset.state = 'done';
        }
      } catch (err) {
        if (generation !== this.generation) {
          return;
        }
        showViewError(panel, id, err);
      }
    };
    for (const tab of built.tabs) {
      const b = h(
        'button',
        {
          class: 'jp-brrr-tab',
          data: { tab: tab.id, testid: `brrr-tab-${tab.id}` },
          attrs: { role: 'tab', type: 'button' }
        },
        tab.label
      );
      b.addEventListener('click', () => void activate(tab.id));
      b.addEventListener('keydown', ev => {
        if (ev.key === 'ArrowRight' || ev.key === 'ArrowLeft') {
          ev.preventDefault();
          const tabs = built.tabs;
          const i = tabs.findIndex(t => t.id === tab.id);
          const next =
            tabs[
              (i + (ev.key === 'ArrowRight' ? 1 : tabs.length - 1)) %
                tabs.length
            ];
          buttons.get(next.id)!.focus();
          void activate(next.id);
        }
      });
      buttons.set(tab.id, b);
      bar.appendChild(b);
      const panel = h('div', {
        class: `jp-brrr-panel jp-brrr-panel-${tab.id}`,
        data: { panel: tab.id },
        attrs: { role: 'tabpanel' }
      });
      panel.hidden = true;
      panels.set(tab.id, panel);
      body.appendChild(panel);
    }
    await activate(built.tabs[0].id);
    if (generation === this.generation) {
      node.dataset.state = 'done';
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.generation++;
    this.themeObserver.disconnect();
    this.removeCharts();
    super.dispose();
  }

  /** The theme's colours where the chart is drawn. */
  protected theme(): IChartTheme {
    return themeOf(this.node);
  }

  protected track(handle: IChartHandle): void {
    this.charts.push(handle);
  }

  private removeCharts(): void {
    for (const c of this.charts) {
      c.remove();
    }
    this.charts = [];
  }

  protected mimeType: string;
  private model: IRenderMime.IMimeModel | null = null;
  private themeName = '';
  private themeObserver: MutationObserver;
  private charts: IChartHandle[] = [];
  private generation = 0;
}

/** A job report: the Ranks tab and the per-rank Timeline. */
export class JobWidget extends TabbedDocument {
  protected build(data: unknown) {
    const job = parseJob(data);
    const ctx: IJobContext = {
      job,
      theme: () => this.theme(),
      track: handle => this.track(handle)
    };
    const s = job.summary;
    return {
      title: `jupyter_brrr job${job.name ? `: ${job.name}` : ''}`,
      chips: [
        `${s.ranks.length} of ${s.world_size} ranks`,
        `${s.backend || 'unknown'} backend`,
        s.devices.join(', ') || 'unknown device'
      ],
      tabs: [
        {
          id: 'ranks',
          label: 'Ranks',
          render: (p: HTMLElement) => renderRanks(p, ctx)
        },
        {
          id: 'rank-timeline',
          label: 'Timeline',
          render: (p: HTMLElement) => renderRankTimeline(p, ctx)
        }
      ]
    };
  }
}

/** A comparison of two measurements (jupyter_brrr.diff): the Change view alone. */
export class ComparisonWidget extends TabbedDocument {
  protected build(data: unknown) {
    const c = parseComparison(data);
    if (!c) {
      throw new ReportError('This output is not a jupyter_brrr comparison.');
    }
    const side = (s: typeof c.before) =>
      s.run !== null
        ? `${s.name || s.label} (run ${s.run})`
        : s.name || s.label;
    return {
      title: `jupyter_brrr change: ${side(c.before)} \u2192 ${side(c.after)}`,
      chips: [c.after.device || c.before.device || 'unknown device'],
      tabs: [
        {
          id: 'change',
          label: 'Change',
          render: (p: HTMLElement) => renderComparison(p, c, 'What changed')
        }
      ]
    };
  }
}

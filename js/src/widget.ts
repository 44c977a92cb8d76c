/**
 * The report widget: a header, a tab bar and one panel per view. Views are
 * drawn when their tab is first opened; charts load BokehJS lazily.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import type { IChartHandle, IChartTheme } from './charts';
import { clear, h } from './dom';
import { fmtPct, fmtTime } from './format';
import { ReportData } from './model';
import { parseReport } from './schema';
import { renderAB } from './views/ab';
import { IViewContext } from './views/common';
import { renderOperators } from './views/operators';
import { renderOverview } from './views/overview';
import { renderRoofline } from './views/roofline';
import { renderTimeline } from './views/timeline';
import { renderWhatIf } from './views/whatif';

/** The CSS class of the root element. */
const CLASS_NAME = 'jp-brrr';

/** One render time measurement. */
export interface IRenderTiming {
  /** Which view: "report" for the first paint, else the tab id. */
  view: string;
  /** Milliseconds from start to the view being drawn. */
  ms: number;
  /** Ops in the report. */
  ops: number;
  /** Kernels in the report. */
  kernels: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/naming-convention
  interface Window {
    /** Render timings of every jupyter_brrr report view drawn on the page. */
    jupyterBrrrRenderTiming?: IRenderTiming[];
  }
}

interface ITab {
  id: string;
  label: string;
  render: (panel: HTMLElement, ctx: IViewContext) => void | Promise<void>;
}

let chartsModule: Promise<typeof import('./charts')> | null = null;

/** Load the chart module (and BokehJS with it) once per page. */
function loadCharts(): Promise<typeof import('./charts')> {
  if (!chartsModule) {
    chartsModule = import('./charts');
    chartsModule.catch(() => {
      chartsModule = null;
    });
  }
  return chartsModule;
}

function record(t: IRenderTiming): void {
  const list = (window.jupyterBrrrRenderTiming ??= []);
  list.push(t);
  if (list.length > 1000) {
    list.splice(0, list.length - 1000);
  }
}

/** A widget that renders a jupyter_brrr report. */
export class ReportWidget extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass(CLASS_NAME);
    // Charts are drawn on canvas with the theme's colours read at draw time:
    // redraw when JupyterLab switches theme (it sets these body attributes).
    this._themeObserver = new MutationObserver(() => {
      const theme = document.body.dataset.jpThemeName ?? '';
      if (theme !== this._themeName && this._model) {
        this._themeName = theme;
        void this.renderModel(this._model);
      }
    });
    this._themeObserver.observe(document.body, {
      attributes: true,
      attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light']
    });
  }

  /** Render a report from the mime model; safe to call again on updates. */
  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const t0 = performance.now();
    this._model = model;
    this._themeName = document.body.dataset.jpThemeName ?? '';
    this._removeCharts();
    this._generation++;
    const node = this.node;
    clear(node);
    delete node.dataset.renderMs;
    node.dataset.state = 'rendering';

    let data: ReportData;
    try {
      data = new ReportData(parseReport(model.data[this._mimeType]));
    } catch (err) {
      node.appendChild(
        h(
          'div',
          { class: 'jp-brrr-error', data: { testid: 'brrr-error' } },
          err instanceof Error ? err.message : String(err)
        )
      );
      node.dataset.state = 'error';
      node.dataset.renderMs = (performance.now() - t0).toFixed(1);
      return;
    }

    const ctx: IViewContext = {
      data,
      theme: () => this._theme(),
      charts: loadCharts,
      track: handle => {
        this._charts.push(handle);
      }
    };

    const tabs: ITab[] = [
      { id: 'overview', label: 'Overview', render: renderOverview },
      { id: 'operators', label: 'Operators', render: renderOperators },
      { id: 'roofline', label: 'Roofline', render: renderRoofline },
      { id: 'timeline', label: 'Timeline', render: renderTimeline },
      { id: 'whatif', label: 'What-if', render: renderWhatIf }
    ];
    if (data.report.ab) {
      tabs.push({ id: 'ab', label: 'A/B', render: renderAB });
    }

    node.appendChild(this._header(data));
    // The tabs handle the arrow keys themselves: keep JupyterLab's notebook
    // shortcuts from taking them.
    const bar = h('div', {
      class: 'jp-brrr-tabs',
      attrs: { role: 'tablist', 'data-lm-suppress-shortcuts': 'true' }
    });
    node.appendChild(bar);
    const body = h('div', { class: 'jp-brrr-body' });
    node.appendChild(body);

    const generation = this._generation;
    const buttons = new Map<string, HTMLButtonElement>();
    const panels = new Map<string, HTMLElement>();
    const drawn = new Set<string>();

    const activate = async (id: string): Promise<void> => {
      for (const [tid, b] of buttons) {
        const on = tid === id;
        b.classList.toggle('jp-mod-active', on);
        b.setAttribute('aria-selected', String(on));
        b.tabIndex = on ? 0 : -1;
        panels.get(tid)!.hidden = !on;
      }
      node.dataset.activeTab = id;
      this._activeTab = id;
      if (drawn.has(id)) {
        return;
      }
      drawn.add(id);
      const tab = tabs.find(t => t.id === id)!;
      const panel = panels.get(id)!;
      const start = performance.now();
      panel.dataset.state = 'rendering';
      try {
        await tab.render(panel, ctx);
        if (generation !== this._generation) {
          return;
        }
        panel.dataset.state = 'done';
      } catch (err) {
        if (generation !== this._generation) {
          return;
        }
        console.error('jupyter_brrr: cannot draw view', id, err);
        panel.appendChild(
          h(
            'div',
            { class: 'jp-brrr-error', data: { testid: 'brrr-view-error' } },
            `This view could not be drawn: ${err instanceof Error ? err.message : String(err)}`
          )
        );
        panel.dataset.state = 'error';
      }
      const ms = performance.now() - start;
      panel.dataset.renderMs = ms.toFixed(1);
      record({
        view: id,
        ms,
        ops: data.report.ops.data.length,
        kernels: data.report.kernels.data.length
      });
    };

    tabs.forEach((tab, i) => {
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
        const k = ev.key;
        if (k === 'ArrowRight' || k === 'ArrowLeft') {
          ev.preventDefault();
          const j =
            (i + (k === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length;
          buttons.get(tabs[j].id)!.focus();
          void activate(tabs[j].id);
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
    });

    // On an update in place (update_display), stay on the tab the user had
    // open; when an A/B comparison has just arrived, show it.
    let initial = 'overview';
    if (this._renders > 0 && data.report.ab && !this._hadAB) {
      initial = 'ab';
    } else if (this._activeTab && tabs.some(t => t.id === this._activeTab)) {
      initial = this._activeTab;
    }
    this._renders++;
    this._hadAB = data.report.ab !== null;
    await activate(initial);
    if (generation !== this._generation) {
      return;
    }
    const ms = performance.now() - t0;
    node.dataset.state = 'done';
    node.dataset.renderMs = ms.toFixed(1);
    record({
      view: 'report',
      ms,
      ops: data.report.ops.data.length,
      kernels: data.report.kernels.data.length
    });
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._generation++;
    this._themeObserver.disconnect();
    this._removeCharts();
    super.dispose();
  }

  private _header(data: ReportData): HTMLElement {
    const r = data.report;
    const s = r.summary;
    const chips: HTMLElement[] = [];
    const chip = (text: string, cls = '', title?: string, testid?: string) =>
      chips.push(
        h(
          'span',
          {
            class: `jp-brrr-chip ${cls}`,
            title,
            data: testid ? { testid } : undefined
          },
          text
        )
      );
    chip(
      data.cpuOnly
        ? data.noGpuFound
          ? 'CPU only (no GPU found)'
          : `${s.device} (no GPU work)`
        : (s.device ?? 'unknown device'),
      'jp-brrr-chip-device',
      'device',
      'brrr-device'
    );
    if (!data.cpuOnly) {
      chip(
        `span ${fmtTime(data.span)}`,
        '',
        'GPU span of one run',
        'brrr-span'
      );
      chip(
        `GPU busy ${fmtPct(data.busyShare, 0)}`,
        '',
        'share of the span with a kernel running',
        'brrr-busy'
      );
    }
    if (s.warm === true) {
      chip('warm', 'jp-brrr-chip-ok', 'steady-state numbers');
    } else if (s.warm === false) {
      chip('first run', 'jp-brrr-chip-warn', 'includes one-time costs');
    }
    return h(
      'div',
      { class: 'jp-brrr-header' },
      h('span', { class: 'jp-brrr-logo' }, 'brrr'),
      h('span', { class: 'jp-brrr-title', title: r.name }, r.name),
      h('span', { class: 'jp-brrr-chips' }, ...chips)
    );
  }

  private _theme(): IChartTheme {
    // The theme's colours as they are now, where the chart is drawn.
    const cs = getComputedStyle(this.node);
    const v = (name: string, fallback: string) =>
      cs.getPropertyValue(name).trim() || fallback;
    return {
      fg: v('--jp-ui-font-color1', '#333'),
      fg2: v('--jp-ui-font-color2', '#666'),
      border: v('--jp-border-color1', '#bbb'),
      grid: v('--jp-border-color2', '#ddd'),
      font: v('--jp-ui-font-family', 'sans-serif'),
      bg: v('--jp-layout-color0', '#fff')
    };
  }

  private _removeCharts(): void {
    for (const c of this._charts) {
      c.remove();
    }
    this._charts = [];
  }

  private _mimeType: string;
  private _model: IRenderMime.IMimeModel | null = null;
  private _themeName = '';
  private _themeObserver: MutationObserver;
  private _activeTab: string | null = null;
  private _renders = 0;
  private _hadAB = false;
  private _charts: IChartHandle[] = [];
  private _generation = 0;
}

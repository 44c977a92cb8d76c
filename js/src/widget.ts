/**
 * The JupyterLab / Notebook 7 MIME renderer: a Lumino widget around the
 * report app (app.ts), which the standalone HTML file uses too.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { ReportApp } from './app';

export type { IRenderTiming } from './app';

/** A widget that renders a jupyter_brrr report. */
export class ReportWidget extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this._app = new ReportApp(this.node);
  }

  /** Render a report from the mime model; safe to call again on updates. */
  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    return this._app.render(model.data[this._mimeType]);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._app.dispose();
    super.dispose();
  }

  private _mimeType: string;
  private _app: ReportApp;
}

/**
 * The JupyterLab / Notebook 7 MIME renderer of a report: a Lumino widget
 * around the report app (app.ts), which the standalone HTML file uses too.
 * AppWidget wraps any of the apps (the job report's and the comparison's
 * too, job_widget.ts).
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { ReportApp } from './app';

export type { IRenderTiming } from './app';

/** What a widget draws with: an app that renders a document into its node. */
export interface IApp {
  /** Render a document (the parsed JSON); safe to call again on updates. */
  render(doc: unknown): Promise<void>;
  /** Free the charts and stop watching the theme. */
  dispose(): void;
}

/** A widget that renders its MIME type's data with an app. */
export class AppWidget extends Widget implements IRenderMime.IRenderer {
  constructor(
    options: IRenderMime.IRendererOptions,
    app: (node: HTMLElement) => IApp
  ) {
    super();
    this._mimeType = options.mimeType;
    this._app = app(this.node);
  }

  /** Render the document of the mime model; safe to call again on updates. */
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
  private _app: IApp;
}

/** A widget that renders a jupyter_brrr report. */
export class ReportWidget extends AppWidget {
  constructor(options: IRenderMime.IRendererOptions) {
    super(options, node => new ReportApp(node));
  }
}

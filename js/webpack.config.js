/*
 * Extra Rspack configuration merged by @jupyter/builder (package.json
 * "jupyterlab.webpackConfig").
 *
 * BokehJS's ES module build (build/js/lib) declares class fields that its
 * constructors fill in during super() (e.g. Toolbar.active_changed). Run
 * natively with ES2022 [[Define]] semantics, those declarations reset the
 * fields to undefined after super() returns. Bokeh's own bundles are compiled
 * with TypeScript's useDefineForClassFields: false; do the same here.
 */
module.exports = {
  // The published BokehJS has no .js.map files: quiet the development build.
  ignoreWarnings: [/Failed to read .*bokehjs.*source map/],
  module: {
    rules: [
      {
        test: /\.js$/,
        include: /node_modules[\\/]@bokeh[\\/]bokehjs[\\/]/,
        loader: 'builtin:swc-loader',
        options: {
          jsc: {
            parser: { syntax: 'ecmascript' },
            target: 'es2022',
            transform: { useDefineForClassFields: false }
          }
        },
        type: 'javascript/auto'
      }
    ]
  }
};

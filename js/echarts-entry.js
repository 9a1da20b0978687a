// The ECharts the studio loads: only the parts the charts of `crates/ttft-charts` use, bundled
// from the npm package by esbuild at build time (Trunk.toml's pre_build hook) into
// target/echarts/echarts.js, which index.html loads as a deferred classic script before the wasm.
//
// What the charts send is in their snapshots (crates/ttft-charts/tests/snapshots/*.snap): the
// top-level keys animation, color, grid, legend, series, title, tooltip, xAxis, yAxis; series of
// type line, bar and scatter; mark lines. A chart whose option names a part missing here loses
// that part silently (ECharts ignores an unregistered component and throws on an unregistered
// series type), so add the import here when the charts start to emit a new one.
import { init, use } from "echarts/core";
import {
  BarChart, // series type "bar": histograms, waterfall (stacked), compare bars, load sweeps
  LineChart, // series type "line": CDFs (step), ITL by position, reading curves, fits, sweeps
  ScatterChart, // series type "scatter": TTFT vs prompt length
} from "echarts/charts";
import {
  GridComponent, // "grid" + "xAxis"/"yAxis" (value, category and log axes): every chart is cartesian
  LegendComponent, // "legend" (plain, and scroll should a chart ask for type "scroll")
  MarkLineComponent, // series "markLine": percentiles, thresholds, knee, reader waits
  TitleComponent, // "title": the chart's name, drawn into PNG exports
  TooltipComponent, // "tooltip" (trigger "axis" / "item"; brings the axis pointer it needs)
} from "echarts/components";
import { CanvasRenderer } from "echarts/renderers"; // canvas: getDataURL makes the PNG export

use([
  BarChart,
  LineChart,
  ScatterChart,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
  CanvasRenderer,
]);

// The global `echarts` the wasm binds (src/browser/echarts.rs): only `init` is called; the
// instance methods (setOption, resize, dispose, getDataURL) come with it.
export { init };

/**
 * The token chart (uPlot, bundled — no CDN): prompt and completion tokens per LLM request, the cumulative cost on a
 * second axis when the model has a price, and a dashed line where each compaction (or /clear) happened. The chart
 * element also carries the counts (`data-requests`, `data-compactions`) so they can be read without the canvas.
 */
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

interface ChartData {
  prompt: number[];
  completion: number[];
  cost: number[];
  currency?: string;
  compactions: number[];
}

let current: uPlot | undefined;

/** Tick spacings of the request axis: whole numbers only. */
const REQUEST_TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000];

function compactionLines(marks: number[]): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u: uPlot) => {
          const { ctx } = u;
          const { top, height } = u.bbox;
          ctx.save();
          ctx.strokeStyle = "#c0392b";
          ctx.setLineDash([6, 4]);
          ctx.lineWidth = 2;
          for (const index of marks) {
            const x = Math.round(u.valToPos(index + 0.5, "x", true));
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
          }
          ctx.restore();
        },
      ],
    },
  };
}

export async function drawChart(element: HTMLElement, url: string): Promise<void> {
  const response = await fetch(url);
  if (!response.ok) return;
  const data = (await response.json()) as ChartData;
  element.dataset.requests = String(data.prompt.length);
  element.dataset.compactions = String(data.compactions.length);
  if (data.prompt.length === 0) {
    current?.destroy();
    current = undefined;
    element.textContent = "no LLM requests yet";
    return;
  }
  element.textContent = "";
  const x = data.prompt.map((_, i) => i + 1);
  const last = x.length - 1;
  const withCost = data.cost.length === data.prompt.length;
  const series: uPlot.Series[] = [
    { label: "request" },
    { label: "prompt", stroke: "#2c7be5", width: 2, points: { show: data.prompt.length < 200 } },
    { label: "completion", stroke: "#e58e26", width: 2, points: { show: data.prompt.length < 200 } },
  ];
  const columns: uPlot.AlignedData = withCost
    ? [x, data.prompt, data.completion, data.cost]
    : [x, data.prompt, data.completion];
  if (withCost) {
    series.push({
      label: `cost (${data.currency ?? ""})`,
      stroke: "#27ae60",
      width: 2,
      scale: "cost",
      value: (_u, v) => (v === null ? "" : v.toFixed(4)),
    });
  }
  // Requests are counted: ticks at whole numbers only (uPlot would put them at 1.5, 2.5 for a few requests).
  const axes: uPlot.Axis[] = [
    { label: "LLM request", incrs: REQUEST_TICKS },
    { label: "tokens", size: 60 },
  ];
  if (withCost) axes.push({ scale: "cost", side: 1, label: data.currency ?? "cost", grid: { show: false }, size: 60 });
  current?.destroy();
  current = new uPlot(
    {
      width: Math.max(280, element.clientWidth),
      height: 240,
      series,
      axes,
      scales: { x: { time: false } },
      plugins: [compactionLines(data.compactions)],
      // Without the cursor on the chart the legend reads the last request, not "--".
      hooks: { setCursor: [(u) => (u.cursor.idx == null ? u.setLegend({ idx: last }) : undefined)] },
    },
    columns,
    element,
  );
  current.setLegend({ idx: last });
}

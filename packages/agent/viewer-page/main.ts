/**
 * The viewer's page script (bundled by scripts/bundle.mjs into bundle/viewer.js; served from /assets). The server
 * renders every page; this adds what needs a running page: the token chart, the rest of a long timeline as it
 * scrolls into view, live updates of a running session, and the compare button.
 */
import "./style.css";
import { drawChart } from "./chart.js";
import { followTimeline } from "./timeline.js";

function sessionsPage(): void {
  const form = document.querySelector<HTMLFormElement>("form.compare-form");
  const button = form?.querySelector<HTMLButtonElement>(".compare-button");
  if (!form || !button) return;
  const update = () => {
    const picked = form.querySelectorAll("input[name=id]:checked").length;
    button.disabled = picked !== 2;
    button.textContent = picked === 2 ? "Compare the two selected" : `Select two to compare (${picked} selected)`;
  };
  form.addEventListener("change", update);
  update();
}

function sessionPage(id: string): void {
  const chart = document.getElementById("chart");
  const refreshChart = chart ? () => drawChart(chart, `/s/${encodeURIComponent(id)}/chart`) : () => Promise.resolve();
  void refreshChart();
  followTimeline(id, document.body.dataset.live === "1", refreshChart);
}

const { page, session } = document.body.dataset;
if (page === "sessions") sessionsPage();
if (page === "session" && session) sessionPage(session);

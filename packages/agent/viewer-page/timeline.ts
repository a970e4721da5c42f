/**
 * The timeline as it grows: the next page is fetched when the end of the list scrolls into view (so a 10 000-
 * message session renders one page at a time), and while the session runs, server-sent `change` events bring the
 * new messages. The server's pages end at a turn boundary or at the first turn still waiting for tool results;
 * re-fetching from there replaces that turn's items, so a running call turns into its result in place.
 */

interface Page {
  html: string;
  next: number;
  more: boolean;
}

interface Change {
  updatedAt: string;
  messages: number;
  title: string | null;
}

export function followTimeline(id: string, live: boolean, onChange: () => Promise<void>): void {
  const timeline = document.getElementById("timeline");
  const end = document.getElementById("timeline-end");
  if (!timeline || !end) return;
  let next = Number(end.dataset.next ?? "0");
  let more = end.dataset.more === "1";
  let busy: Promise<void> | undefined;
  let again = false;

  const load = async () => {
    const from = next;
    const response = await fetch(`/s/${encodeURIComponent(id)}/timeline?from=${from}`);
    if (!response.ok) throw new Error(`timeline: HTTP ${response.status}`);
    const page = (await response.json()) as Page;
    for (const item of timeline.querySelectorAll<HTMLElement>(".item")) {
      if (Number(item.dataset.seq) >= from) item.remove();
    }
    timeline.insertAdjacentHTML("beforeend", page.html);
    next = page.next;
    more = page.more;
    end.dataset.next = String(next);
    end.dataset.more = more ? "1" : "0";
    end.textContent = more ? "loading more…" : "";
    document.querySelector(".empty")?.toggleAttribute("hidden", timeline.children.length > 0);
  };

  /** One fetch at a time; a request during a fetch runs once more afterwards. */
  const pull = (): Promise<void> => {
    if (busy) {
      again = true;
      return busy;
    }
    busy = load()
      .catch((error: unknown) => {
        end.textContent = `could not load the timeline: ${(error as Error).message}`;
      })
      .finally(() => {
        busy = undefined;
        if (again) {
          again = false;
          void pull();
        } else if (more && visible) void pull();
      });
    return busy;
  };

  let visible = false;
  new IntersectionObserver(
    (entries) => {
      visible = entries.some((e) => e.isIntersecting);
      if (visible && more) void pull();
    },
    { rootMargin: "800px" },
  ).observe(end);

  if (!live) return;
  const state = document.querySelector(".live-state");
  const source = new EventSource(`/s/${encodeURIComponent(id)}/events`);
  let seen: string | undefined;
  source.addEventListener("change", (event) => {
    const change = JSON.parse((event as MessageEvent<string>).data) as Change;
    const count = document.querySelector(".totals .count");
    if (count) count.textContent = String(change.messages);
    const word = document.querySelector(".totals .count-word");
    if (word) word.textContent = change.messages === 1 ? "message" : "messages";
    const updated = document.querySelector("time.updated");
    if (updated) updated.textContent = `${change.updatedAt.slice(0, 10)} ${change.updatedAt.slice(11, 16)}`;
    if (change.title) {
      const title = document.querySelector(".session-title");
      if (title) title.textContent = change.title;
    }
    const first = seen === undefined;
    seen = change.updatedAt;
    // Also on the first event: the session may have moved between the page's rendering and this stream's start.
    if (!more) void pull();
    if (first) return;
    if (state) state.textContent = "· live";
    void onChange();
  });
  source.addEventListener("error", () => {
    if (state) state.textContent = "· reconnecting…";
  });
}

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseHTML } from "linkedom";
import { elementsByTag, prune, type ReadableElement } from "../src/web/readability.js";

function parse(body: string) {
  const { document } = parseHTML(`<!DOCTYPE html><html><head><title>t</title></head><body>${body}</body></html>`);
  return { document, root: document.documentElement as unknown as ReadableElement };
}

describe("Readability helpers", () => {
  test("elementsByTag finds the same elements as querySelectorAll, in document order, without the root", () => {
    const { document, root } = parse(
      "<div id='a'><p>1</p><div><h2>2</h2><p>3<img src='x'></p></div></div><section><h1>4</h1><p>5</p></section>",
    );
    const ids = (list: ArrayLike<unknown>) =>
      Array.from(
        list as ArrayLike<{ localName: string; textContent: string }>,
        (e) => `${e.localName}:${e.textContent}`,
      );
    for (const tags of [["p"], ["h1", "h2", "p"], ["div", "img"], ["*"]]) {
      assert.deepEqual(ids(elementsByTag(root, tags)), ids(document.documentElement.querySelectorAll(tags.join(","))));
    }
    const outer = document.getElementById("a") as unknown as ReadableElement;
    assert.deepEqual(ids(elementsByTag(outer, ["div", "p"])), ["p:1", "div:23", "p:3"]);
  });

  test("prune drops navigation, asides, footers, form controls and hidden elements, and keeps the article", () => {
    const { document, root } = parse(
      `<nav>Menu</nav><header><h1>Kept title</h1></header><main><article><p>Body text</p>
       <div role="navigation">Breadcrumbs</div><div hidden>Hidden</div><div style="color: red; display: none">Invisible</div>
       <span aria-hidden="true">Icon</span><img class="fallback-image" aria-hidden="true" alt="math">
       <div style="display:block">Visible block</div><button>Share</button><iframe src="/ad"></iframe></article>
       <aside>Related</aside></main><footer>Copyright</footer>`,
    );
    assert.ok(prune(root) > 5);
    const text = document.body.textContent ?? "";
    for (const kept of ["Kept title", "Body text", "Visible block"]) assert.ok(text.includes(kept), kept);
    for (const gone of ["Menu", "Breadcrumbs", "Hidden", "Invisible", "Icon", "Share", "Related", "Copyright"]) {
      assert.ok(!text.includes(gone), gone);
    }
    assert.ok(document.querySelector("img.fallback-image"), "math fallback images stay, as Readability keeps them");
    assert.equal(document.querySelector("iframe"), null);
  });
});

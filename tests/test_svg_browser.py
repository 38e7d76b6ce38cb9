"""A downloaded drawing opened in headless Chromium from the file alone, offline (mark browser)."""

from __future__ import annotations

from klue_viz.outputs.example_document import example_svg
from tests.test_browser import CHROMIUM, LAUNCH_ARGS, playwright, pytestmark  # noqa: F401  (pytestmark: browser, skipped without chromium)
from tests.test_svg import hostile_ner


def test_the_drawing_opens_in_chromium_offline(tmp_path):
    """The file alone, every request but the file refused: the text elements render with a width, nothing runs."""
    task, result = hostile_ner()
    path = tmp_path / "drawing.svg"
    path.write_text(example_svg(task, result.frames, [result.frames.examples["guid"].iloc[0]]), encoding="utf-8")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(offline=True)
            requests = []
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else (requests.append(route.request.url), route.abort()))
            page = context.new_page()
            page.goto(path.as_uri())
            boxes = page.eval_on_selector_all("text.kv-text", "els => els.map(e => [e.textContent, e.getBBox().width])")
            assert boxes and all(width > 0 for _, width in boxes)
            assert any("script" in text for text, _ in boxes) and any("김" in text for text, _ in boxes)
            assert page.evaluate("typeof alert") == "function" and page.evaluate("document.querySelectorAll('script').length") == 0
            assert requests == []
        finally:
            browser.close()

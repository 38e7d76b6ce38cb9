"""Key presses made while the page reruns are queued and replayed, not lost (issue 29, item 13).

Streamlit's button shortcuts click a button on a key; a click sent while the script still runs for the previous
one is merged with it (the two presses of one button become one trigger) or reaches a callback drawn for the
unit the page no longer shows. So the page's keys are held while a run is under way (or a press was just sent and
its run has not begun) and replayed one at a time, each by clicking its button once the page is idle again; a
small badge says how many keys wait, and a key whose button is gone or disabled by then is reported as not taken.

The script names no file text: only the fixed key letters and the CSS classes Streamlit gives keyed elements
(`st-key-` + the widget key, other characters as `-`). It is installed once into the page (a script element of the
parent document, so it outlives the component's iframe); each component updates its part of the key map.
"""

from __future__ import annotations

import json
import re

import streamlit.components.v1 as components

INSTALL = """
(function () {
  const w = window;
  if (w.__kvKeys) { return; }
  const kv = w.__kvKeys = {parts: {}, queue: [], sentAt: 0, sawRun: false};
  const doc = w.document;
  const app = () => doc.querySelector('[data-testid="stApp"]');
  const running = () => { const a = app(); return !!a && a.getAttribute('data-test-script-state') === 'running'; };
  // a press was sent and its run has not finished: later keys wait (2 s at most if no run comes of it)
  const busy = () => running() || (kv.sentAt > 0 && Date.now() - kv.sentAt < 2000);
  const editable = t => !!t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  const classOf = key => { for (const name of Object.keys(kv.parts).sort()) { if (kv.parts[name][key]) { return kv.parts[name][key]; } } return null; };
  const badge = (text) => {
    let b = doc.getElementById('kv-key-queue');
    if (!text) { if (b) { b.remove(); } return; }
    if (!b) {
      b = doc.createElement('div');
      b.id = 'kv-key-queue';
      b.setAttribute('role', 'status');
      b.style.cssText = 'position:fixed;right:1rem;bottom:1rem;z-index:1000;padding:.3rem .6rem;border-radius:.4rem;' +
                        'background:#0969da;color:#fff;font:600 .8rem sans-serif';
      doc.body.appendChild(b);
    }
    b.textContent = text;
  };
  const show = () => badge(kv.queue.length ? kv.queue.length + ' key(s) waiting for the page: ' + kv.queue.join(' ') : '');
  const replay = () => {
    if (!kv.queue.length || busy()) { return; }
    const key = kv.queue.shift();
    const cls = classOf(key);
    const button = cls ? doc.querySelector('.' + cls + ' button') : null;
    if (button && !button.disabled) {
      kv.sentAt = Date.now();
      kv.sawRun = false;
      button.click();
      show();
    } else {
      badge('key ' + key + ' was not taken: nothing to do for it on the page now');
      w.setTimeout(show, 2500);
    }
  };
  w.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || editable(e.target)) { return; }
    const key = (e.key || '').toUpperCase();
    if (key.length !== 1 || !classOf(key)) { return; }
    if (busy() || kv.queue.length) {
      e.preventDefault();
      e.stopImmediatePropagation();
      kv.queue.push(key);
      show();
      return;
    }
    kv.sentAt = Date.now();  // this press goes through to Streamlit's shortcut
    kv.sawRun = false;
  }, true);
  const watch = () => {
    const a = app();
    if (!a) { w.setTimeout(watch, 100); return; }
    new MutationObserver(() => {
      if (running()) { kv.sawRun = true; return; }
      if (kv.sawRun) { kv.sentAt = 0; kv.sawRun = false; }
      replay();
    }).observe(a, {attributes: true, attributeFilter: ['data-test-script-state']});
  };
  watch();
  w.setInterval(replay, 250);  // a press whose run never came: its keys go once the 2 s are over
})();
"""


def css_class(widget_key: str) -> str:
    """The class Streamlit gives the element of a keyed widget (its frontend's rule: st-key- and the key, characters
    other than letters, digits, _ and - as -)."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", widget_key.strip())


def key_queue(parts: dict[str, dict[str, str]]) -> None:
    """Install the queue (once per page) and set the key map of each named part (the example list, the gold review):
    key letter -> the widget key of its button. An empty map takes a part's keys away (its buttons have no shortcut
    now, or are not drawn)."""
    maps = {part: {letter.upper(): css_class(widget) for letter, widget in keys.items()} for part, keys in parts.items()}
    script = (f"<script>\nconst parent = window.parent;\n"
              f"if (!parent.__kvKeys) {{ const s = parent.document.createElement('script'); s.textContent = {json.dumps(INSTALL)}; "
              f"parent.document.head.appendChild(s); }}\n"
              f"Object.assign(parent.__kvKeys.parts, {json.dumps(maps)});\n</script>")
    components.html(script, height=0)

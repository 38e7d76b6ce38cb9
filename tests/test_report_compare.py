"""The report's part on many runs: besides the ranking, what each run fixed and broke against the one before it and how
much the runs complement each other, on the planted sequence of tests/test_compare.py (counts by hand below)."""

from __future__ import annotations

import html as entities
import re

from test_compare import NLI, WRONG_1, WRONG_2, WRONG_3, nli_gold, nli_run

from klue_viz.outputs.report import build_report


def test_the_report_says_what_each_checkpoint_fixed_and_broke():
    gold = nli_gold()
    runs = [nli_run(gold, name, wrong) for name, wrong in (("ckpt-1", WRONG_1), ("ckpt-2", WRONG_2), ("ckpt-3", WRONG_3))]
    html = build_report(NLI, runs, "planted", errors=1, samples=100)
    part = entities.unescape(html[html.index("<h3>What each run fixed"):html.index("<h2>Paired comparison</h2>")])
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", part) if "<td" in row]
    # ckpt-2 fixes 0..19 and breaks 100..109; ckpt-3 fixes 20..29 and 100..104 and breaks 200..202
    assert rows == [["ckpt-1", "ckpt-2", "20", "10"], ["ckpt-2", "ckpt-3", "15", "3"]]
    # wrong for all three: 30..59 (30 of 400), so the oracle is 370/400; ckpt-3 alone 362/400; ckpt-1 + ckpt-3 miss 30..59 only
    assert "some run gets 92.5% right" in part
    assert "the best single run, ckpt-3, 90.5%" in part
    assert "the best pair, ckpt-1 + ckpt-3, 92.5%" in part
    assert "30 are wrong for every run" in part

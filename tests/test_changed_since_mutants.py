"""The functions that changed after their module's mutmut run (issue 31, docs/mutation.md): corrected.py's `settle`,
`correctors`, `corrected_file` and `rescore`, review.py's `example_items`, user_features.py's `apply_features` and
`summary`, answers.py's `Vocabulary.__init__`. Each test holds a case a surviving mutant showed untested.

Expected values are written out by hand from the input in the test (the corrected files from the official records,
the reasons from the corrections' words, ranks and places moved counted), never taken from the call under test."""

from __future__ import annotations

import copy
import json

from klue_viz.core.problems import Problem
from klue_viz.discovery.corrected import Correction, corrected_file, correctors, settle
from klue_viz.tasks import get_task
from tests.cases import nli, wos

NLI, WOS = get_task("nli"), get_task("wos")
E, N, C = "entailment", "neutral", "contradiction"
G = [f"klue-nli-v1_dev_{k:05d}" for k in range(5)]
MISSING = "klue-nli-v1_dev_09999"
CHEAP, DEAR, SEOUL = "식당-가격대-싼", "식당-가격대-비싼", "식당-지역-서울"
#: Two dialogues: wos-v1_dev_00000 with one user turn, wos-v1_dev_00001 with two.
DIALOGUES = wos([[[CHEAP]], [[CHEAP], [CHEAP, SEOUL]]])
D0, D1 = "wos-v1_dev_00000", "wos-v1_dev_00001"


# ---- corrected.py: settle --------------------------------------------------------------------------------------------

def mixed() -> list[Correction]:
    """0 and 6: one person's two corrections of g2 (applied together); 1, 4, 7: three people disagree on g3 (none
    applied); 2: a guid the gold has not; 3 and 5: two people agree on g1 (5 with spaces around the label)."""
    return [Correction(G[2], E, annotator="kim"), Correction(G[3], N, annotator="kim"), Correction(MISSING, N, annotator="kim"),
            Correction(G[1], C, annotator="kim"), Correction(G[3], C, annotator="lee"), Correction(G[1], f" {C} ", annotator="lee"),
            Correction(G[2], N, annotator="kim"), Correction(G[3], E)]


CONFLICT = f"{G[3]}: kim's correction neutral conflicts with lee's contradiction, (anonymous)'s entailment; neither is applied"
NOT_IN_GOLD = f"{MISSING}: not in the gold n.json; the correction 'neutral' is not applied"


def test_settle_keeps_agreements_and_one_persons_corrections_and_leaves_out_conflicts_and_unknown_guids_in_input_order():
    """Applied in the order given (not the units' order, which would put 6 before 3), left out likewise."""
    made = mixed()
    usable, left_out = settle(NLI, json.dumps(nli([E, N, C, E, N])), "n.json", made)
    assert usable == [made[0], made[3], made[5], made[6]]
    assert left_out == [(made[1], CONFLICT), (made[2], NOT_IN_GOLD), (made[4], CONFLICT), (made[7], CONFLICT)]


def test_the_corrected_file_applies_the_settled_corrections_and_lists_every_one_left_out_once():
    """g2: kim's last correction (neutral) wins, g1: contradiction; g4's `maybe` is refused by the patch writer, whose
    problem is the only one for it."""
    made = [*mixed(), Correction(G[4], "maybe", annotator="kim")]
    records = nli([E, N, C, E, N])
    found = corrected_file(NLI, json.dumps(records, ensure_ascii=False), "n.json", iter(made))
    expected = copy.deepcopy(records)
    expected[1]["gold_label"], expected[2]["gold_label"] = C, N
    assert found.text == json.dumps(expected, ensure_ascii=False, indent=2) + "\n"
    assert found.changed == [G[1], G[2]] and found.applied == [made[0], made[3], made[5], made[6]]
    refusal = "corrected label 'maybe' is not a NLI label (expected one of: entailment, neutral, contradiction, or an integer id)"
    assert found.left_out == [(made[1], CONFLICT), (made[2], NOT_IN_GOLD), (made[4], CONFLICT), (made[7], CONFLICT),
                              (made[8], f"{G[4]}: the correction 'maybe' is not applied: {refusal}")]
    assert found.problems == [Problem(refusal, None, G[4], "n.json"), Problem(CONFLICT, None, G[3], "n.json"),
                              Problem(NOT_IN_GOLD, None, MISSING, "n.json"), Problem(CONFLICT, None, G[3], "n.json"),
                              Problem(CONFLICT, None, G[3], "n.json")]


def test_wos_corrections_are_checked_against_the_dialogues_and_applied_to_their_turns():
    """A WoS correction is stored under its dialogue's guid and a turn (`annotation_key`), while the gold's rows are the
    turns (`wos-v1_dev_00001-1`): every WoS correction used to be left out as "not in the gold" (a bug this test found)."""
    made = [Correction(D1, DEAR, turn=1, annotator="kim")]
    found = corrected_file(WOS, json.dumps(DIALOGUES, ensure_ascii=False), "w.json", made)
    expected = copy.deepcopy(DIALOGUES)
    expected[1]["dialogue"][2]["state"] = [DEAR, SEOUL]  # the second user turn; the slot keeps its place
    assert found.text == json.dumps(expected, ensure_ascii=False, indent=2) + "\n"
    assert found.changed == [D1] and found.applied == made and found.left_out == [] and found.problems == []


def test_a_wos_conflict_names_the_turn_and_a_correction_of_no_turn_leaves_the_record_as_it_was():
    """Dialogue 1, turn 0: kim and an anonymous reviewer disagree. Dialogue 0 has one user turn, so a correction of its
    turn 7 reaches the patch writer, which changes nothing and says nothing."""
    made = [Correction(D1, DEAR, turn=0, annotator="kim"), Correction(D1, f"{CHEAP}집", turn=0), Correction(D0, DEAR, turn=7, annotator="lee")]
    found = corrected_file(WOS, json.dumps(DIALOGUES, ensure_ascii=False), "w.json", made)
    conflict = f"{D1} turn 0: kim's correction {DEAR} conflicts with (anonymous)'s {CHEAP}집; neither is applied"
    unchanged = f"{D0}: the correction '{DEAR}' is not applied: it leaves the record as it was"
    assert json.loads(found.text) == DIALOGUES and found.changed == [] and found.applied == []
    assert found.left_out == [(made[0], conflict), (made[1], conflict), (made[2], unchanged)]
    assert found.problems == [Problem(conflict, None, D1, "w.json"), Problem(conflict, None, D1, "w.json"), Problem(unchanged, None, D0, "w.json")]


# ---- corrected.py: correctors ----------------------------------------------------------------------------------------

def test_correctors_count_the_anonymous_together_and_break_ties_in_natural_order():
    """Counted by hand: anonymous 3 (two saved with no name, one with ""), kim10 2, kim9 2, lee 1; kim9 before kim10."""
    made = [Correction("a", E, annotator="kim10"), Correction("b", E), Correction("c", E, annotator="lee"), Correction("d", E, annotator="kim9"),
            Correction("e", E, annotator=""), Correction("f", E, annotator="kim10"), Correction("g", E), Correction("h", E, annotator="kim9")]
    assert correctors(iter(made)) == ["(anonymous) (3)", "kim9 (2)", "kim10 (2)", "lee (1)"]
    assert correctors([]) == []

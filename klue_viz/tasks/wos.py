"""WoS: dialogue state tracking; one example per user turn, joint goal accuracy and slot F1 (klue-tasks.md §8)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem, record_fault
from klue_viz.core.results import Frames, ScoredRun
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import WOS_LAYOUT, Statistics, mean_statistics, prf_statistics, turn_prf, wos_aggregate
from klue_viz.reading.answers import NOTHING_FORMS, Answer, json_in, strip_answer, unreadable
from klue_viz.tasks.base import (
    DetailLevel,
    DrawingDocument,
    Metric,
    RecordError,
    SeenInTraining,
    Slice,
    SurfaceForms,
    Task,
    TaskFacts,
    ViewSettings,
    as_int,
    as_list,
)
from klue_viz.tasks.kit import Evidence, Suspect, correction_items, dump_json, read_json, suspect_item
from klue_viz.tasks.probing import ProbeExample, ProbeIO, Span, Unmade, carried_text
from klue_viz.tasks.surface import surface_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

SPECIAL_VALUES = ("dontcare", "yes", "no")
#: The five WoS domains (ontology.json): a generated state item starts with one of them.
DOMAINS = ("관광", "숙소", "식당", "지하철", "택시")
#: One `domain-slot-value` in a generated list (a bullet, quotes and spaces around it allowed).
STATE_ITEM = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s*)?[\"'“‘]?\s*((?:" + "|".join(DOMAINS) + r")\s*-\s*[^-\n]+?\s*-\s*[^\n]+?)\s*[\"'”’]?\s*$")


def split_item(item: str) -> tuple[str, str, str]:
    """'식당-예약 시간-23:20' -> ('식당', '예약 시간', '23:20'); values may hold '-' themselves."""
    parts = item.split("-", 2)
    if len(parts) != 3 or not all(p.strip() for p in parts[:2]):
        raise RecordError(f"state item {item!r} is not 'domain-slot-value'")
    return parts[0], parts[1], parts[2]


def value_class(value: str | None) -> str:
    if value is None:
        return "none"
    return value if value in SPECIAL_VALUES or value == "none" else "value"


def state_statistics(gold_states: list[list[str]], pred_states: list[list[str]]) -> Statistics:
    """Per turn: whether the state is right as a set (joint goal) and the turn's slot F1."""
    pairs = list(zip(gold_states, pred_states))
    return mean_statistics(WOS_LAYOUT, {"joint_goal": np.array([set(g) == set(p) for g, p in pairs], dtype=np.float64),
                                        "turn_f1": np.array([turn_prf(g, p)[3] for g, p in pairs], dtype=np.float64)}, wos_aggregate)


def training_keys(rows: list[dict]) -> Iterator[str]:
    """Every `domain-slot-value` of the training turns' gold states."""
    return (item for row in rows for item in row["gold_state"])


def unit_training_keys(units: pd.DataFrame) -> list[str]:
    """A slot row's `domain-slot-value`: the gold value if any, else the predicted one."""
    values = units["gold_value"].where(units["gold_value"].notna(), units["pred_value"])
    return (units["domain_slot"] + "-" + values.astype(str)).tolist()


def _surface_errors(frames: Frames) -> pd.DataFrame:
    """Errors by surface form: each gold slot value missing or wrongly valued, each extra one (by the predicted value), per
    domain-slot."""
    slots = frames.details["slots"]
    wrong = slots[slots["status"] != "correct"]
    form = np.where(wrong["status"] == "extra", wrong["pred_value"].astype(str), wrong["gold_value"].astype(str))
    shown = np.where(wrong["status"] == "wrong value", wrong["status"] + ": " + wrong["pred_value"].astype(str), wrong["status"].astype(str))
    rows = pd.DataFrame({"form": form, "type": wrong["domain_slot"].astype(str), "error": shown, "guid": wrong["guid"]})
    has_gold = slots[slots["gold_value"].notna() & (slots["status"] != "extra")]
    totals = has_gold.groupby([has_gold["gold_value"].astype(str), has_gold["domain_slot"].astype(str)]).size().to_dict()
    return surface_table(rows, "slot value", totals)


class _SlotRow(Protocol):
    """A row of the WoS slots frame (from `itertuples`), as `_chip` reads it."""

    status: str
    domain_slot: str
    gold_value: object
    pred_value: object


def _chip(slot: _SlotRow) -> dict:
    if slot.status == "missing":
        return {"text": f"{slot.domain_slot} = {slot.gold_value} (missed)", "status": "missing"}
    if slot.status == "extra":
        return {"text": f"{slot.domain_slot} = {slot.pred_value} (extra)", "status": "extra"}
    return {"text": f"{slot.domain_slot}: gold {slot.gold_value} / pred {slot.pred_value}", "status": "wrong_value"}


def _drawing_document(frames: Frames, guids: list[str]) -> dict:
    """The card of `guids` as a document for klue_viz.drawing.svg (what to draw, no markup)."""
    first = frames.example(guids[0])
    dialogue = frames.rows(first["dialogue"], by="dialogue").sort_values("turn")
    slots = frames.rows(first["dialogue"], "slots", by="dialogue")
    turns = []
    for turn in dialogue.itertuples():
        if turn.system:
            turns.append({"speaker": "sys", "text": turn.system})
        wrong = slots[(slots["guid"] == turn.guid) & (slots["status"] != "correct")]
        chips = [_chip(s) for s in wrong.itertuples()] or [{"text": f"prediction = gold ({len(turn.gold_state)} slots)", "status": "correct"}]
        turns.append({"speaker": f"user {turn.turn}", "text": turn.text, "chips": chips, "broken": not turn.correct})
    legend = [{"text": "state right", "status": "correct"}, {"text": "missed slot", "status": "missing"}, {"text": "extra slot", "status": "extra"},
              {"text": "wrong value", "status": "wrong_value"}, {"text": "red bar: joint goal wrong on this turn", "status": "wrong"}]
    return {"kind": "turns", "turns": turns, "legend": legend}


#: The slot whose values are names a name-swap replaces (of a sight, a restaurant, a hotel), in one domain.
NAME_SLOT = "이름"


class WosProbe(ProbeIO):
    """WoS dialogues for the suites: every turn's text is a text field, every occurrence of a state value in a turn a
    span (labelled domain-slot) that no spacing or typo edit touches. A name-swap rewrites a value in every turn and in
    every state alike; an edit that changes a value somewhere but leaves it written elsewhere is not made. The unit
    compared is the dialogue: every user turn's predicted state."""

    tests = ("name-swap", "spacing", "typo", "number-format")
    edit_fields = ()  # every turn of the dialogue
    file_name = "wos-v1.1_dev.json"
    names_from_spans = True
    names_near_in_meaning = False  # a 식당-이름 value for a 식당-이름 value: the slot is the fine kind already
    #: The state is asked for as items separated by commas, not as examples/lm_eval/klue_wos_gen.yaml's JSON list: the
    #: harness reads a target that looks like a list as a list of alternative answers (`ast.literal_eval`), which would
    #: make each single item a right answer for its own exact_match. klue-viz's answer parser reads both forms.
    lm_eval = {"output_type": "generate_until",
               "doc_to_text": "다음 대화의 마지막 사용자 발화 이후 대화 상태를 '영역-슬롯-값' 항목으로, 쉼표로 구분해 쓰세요 "
                              "(예: 식당-가격대-저렴, 식당-지역-서울 중앙). 상태가 없으면 '없음'이라고 쓰세요.\n{{dialogue}}\n상태:",
               "doc_to_target": "{{target}}", "generation_kwargs": {"until": ["\n\n"], "max_gen_toks": 256}}

    def lm_docs(self, example: ProbeExample) -> list[dict[str, Any]]:
        """One document per user turn: the dialogue so far and the state after it, with the dialogue's guid and the
        turn's number among the user turns (how klue-viz matches a WoS prediction; examples/lm_eval/klue_utils.wos_docs)."""
        docs: list[dict[str, Any]] = []
        history: list[str] = []
        for utterance in example.record["dialogue"]:
            history.append(("사용자" if utterance["role"] == "user" else "시스템") + ": " + str(utterance["text"]))
            if utterance["role"] == "user":
                state = [str(item) for item in utterance.get("state") or []]
                docs.append({"guid": example.guid, "turn": len(docs), "dialogue": "\n".join(history), "target": ", ".join(state) or "없음"})
        return docs

    def swappable(self, label: str) -> bool:
        return "|" not in label and label.split("-", 1)[-1] == NAME_SLOT

    def read(self, text: str, name: str) -> tuple[list[ProbeExample], list[Problem]]:
        data = read_json(text, name)
        if not isinstance(data, list):
            raise InputError(f"{name}: expected the official WoS JSON list of dialogues")
        examples, problems = [], []
        for k, dialogue in enumerate(data):
            try:
                turns = {f"turn-{i}": str(turn["text"]) for i, turn in enumerate(dialogue["dialogue"])}
                slots: dict[str, set[str]] = defaultdict(set)
                for turn in dialogue["dialogue"]:
                    for item in turn.get("state") or []:
                        domain, slot, value = split_item(str(item))
                        slots[value].add(f"{domain}-{slot}")
                values = {value: "|".join(sorted(found)) for value, found in slots.items()}  # a value of two slots: not swapped
                guid = str(dialogue["guid"])
            except (KeyError, TypeError, RecordError) as err:
                problems.append(Problem(f"dialogue #{k + 1} not usable: {record_fault(err)}", file=name))
                continue
            spans = []
            for field_name, turn_text in turns.items():
                for value, slot in values.items():
                    at = turn_text.find(value) if len(value) >= 2 and value not in SPECIAL_VALUES else -1
                    while at >= 0:
                        spans.append(Span(field_name, at, at + len(value), slot))
                        at = turn_text.find(value, at + len(value))
            examples.append(ProbeExample(guid, turns, tuple(spans), None, dialogue))
        return examples, problems

    def rebuilt(self, example: ProbeExample, guid: str, texts: dict[str, str], spans: tuple[Span, ...], label: Any) -> ProbeExample:
        renamed: dict[str, str] = {}
        for old, new in zip(example.spans, spans):
            before, after = example.texts[old.field][old.start:old.end], texts[new.field][new.start:new.end]
            if before != after and renamed.setdefault(before, after) != after:
                raise Unmade("one slot value would be rewritten two ways")
        for new in spans:
            if texts[new.field][new.start:new.end] in renamed:
                raise Unmade("a rewritten slot value is still written elsewhere in the dialogue")
        turns = []
        for i, turn in enumerate(example.record["dialogue"]):
            turn = {**turn, "text": texts[f"turn-{i}"]}
            if "state" in turn:
                turn["state"] = [f"{d}-{s}-{renamed.get(v, v)}" for d, s, v in map(split_item, turn["state"])]
            turns.append(turn)
        return ProbeExample(guid, texts, spans, label, {**example.record, "guid": guid, "dialogue": turns})

    def write(self, examples: Sequence[ProbeExample]) -> str:
        return dump_json([e.record for e in examples])

    def unit_of(self, row: dict) -> str:
        return str(row["dialogue"])

    def answer(self, prediction: Any) -> Hashable:
        return frozenset(prediction)

    def answer_of(self, predictions: list[Any]) -> Hashable:
        return tuple(frozenset(p) for p in predictions)

    def same(self, source: Hashable, perturbed: Hashable, edits: Sequence[dict[str, Any]]) -> bool:
        """Turn by turn, the source's predicted states with every edited name or number carried into their values."""
        assert isinstance(source, tuple) and isinstance(perturbed, tuple)
        carried = tuple(frozenset(f"{d}-{s}-{carried_text(v, edits)}" for d, s, v in map(split_item, state)) for state in source)
        return carried == perturbed


class Wos(Task):
    facts = TaskFacts(
        name="wos",
        title="WoS dialogue state tracking",
        guid_prefix="wos-v1",
        metrics=(Metric("joint_goal_acc", "Joint goal accuracy"), Metric("slot_micro_f1", "Slot F1 (mean per turn)")),
        hf_config="wos",
        official_folder="wos-v1.1",
        slices=(
            Slice("domain_count", "Dialogue domains"),
            Slice("domains", "Domain set"),
            Slice("turn_bucket", "Turn index"),
            Slice("domain_slot", "Domain-slot", level="slots"),
            Slice("value_type", "Value type", level="slots"),
            Slice("change", "Carried over or updated", level="slots"),
        ),
        signature_fields=frozenset({"state", "turn"}),
        bare_value_field="state",
        unit="turn",
        text_columns=("text", "system"),
        confusion_label="value class",
        error_tags=("carried-over slot", "missed update", "value normalisation", "dontcare", "wrong domain", "gold error"),
        detail=DetailLevel("slots", "slot", "slots"),
    )
    surface = SurfaceForms(_surface_errors)
    svg_document = DrawingDocument(_drawing_document)
    view = ViewSettings(card_column="dialogue")
    probe = WosProbe()
    training = SeenInTraining("Slot value seen in training", training_keys, unit_training_keys)
    prediction_fields = frozenset({"state"})
    answer_parser_version = 1

    def read_official_json(self, data: Any, name: str) -> tuple[list[dict], list[Problem]]:
        if not isinstance(data, list):
            raise InputError(f"{name}: expected the official WoS JSON list of dialogues")
        return self.rows_from_hf(data)

    def looks_like_hf(self, record: dict) -> bool:
        return True  # HF records and official dialogues share one schema; sys turns just carry an empty state

    def rows_from_hf(self, records: Iterable[dict], split: str = "dev") -> tuple[list[dict], list[Problem]]:
        rows, problems = [], []
        for dialogue in records:
            try:
                guid, domains, turns = str(dialogue["guid"]), list(dialogue.get("domains") or []), dialogue["dialogue"]
                user_turn, system = 0, ""
                previous: list[str] = []
                for turn in turns:
                    if turn["role"] != "user":
                        system = str(turn["text"])
                        continue
                    state = [str(s) for s in (turn.get("state") or [])]
                    for item in state:
                        split_item(item)
                    rows.append({
                        "guid": f"{guid}-{user_turn}",
                        "dialogue": guid,
                        "turn": user_turn,
                        "domains": " ".join(domains),
                        "domain_count": "single-domain" if len(domains) == 1 else f"{len(domains)} domains",
                        "system": system,
                        "text": str(turn["text"]),
                        "gold_state": state,
                        "previous_gold": previous,
                    })
                    previous, system, user_turn = state, "", user_turn + 1
            except (KeyError, TypeError, RecordError) as err:
                problems.append(Problem(f"dialogue not usable: {record_fault(err)}", guid=dialogue.get("guid") if isinstance(dialogue, dict) else None))
        return rows, problems

    def record_key(self, record: dict) -> str | None:
        key = super().record_key(record)
        if key is not None and record.get("turn") not in (None, ""):
            try:
                return f"{key}-{as_int(record['turn'], 'turn')}"
            except RecordError:
                return f"{key}-{record['turn']}"
        return key

    def annotation_key(self, example: dict) -> tuple[str, int | None]:
        return example["dialogue"], int(example["turn"])

    def parse_prediction(self, record: dict, gold: dict) -> list[str]:
        if record.get("state") is None:
            raise RecordError("missing field 'state' (list of 'domain-slot-value'; [] for an empty state)")
        state = [str(s).strip() for s in as_list(record["state"], "state")]
        for item in state:
            split_item(item)
        return state

    def empty_prediction(self, gold: dict) -> list[str]:
        return []

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """A belief state from a generated text: a JSON list of `domain-slot-value` strings (or a `{"domain-slot": value}`
        object), or one item per line or comma; `없음` / `[]` is the empty state. Items must start with a WoS domain;
        a text with none is unreadable."""
        start, end = strip_answer(text, brackets=False)
        core = text[start:end]
        if core.casefold() in NOTHING_FORMS:
            return Answer(text, {"state": []}, (start, end))
        found = json_in(text, start, end)
        if found is not None:
            value, a, b = found
            if isinstance(value, dict):
                value = [f"{k}-{v}" for k, v in value.items()]
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                items = [re.sub(r"\s*-\s*", "-", v.strip(), count=2) for v in value]
                bad = [v for v in items if not STATE_ITEM.match(v)]
                if bad:
                    return unreadable(text, f"state item {bad[0]!r} is not 'domain-slot-value' with a WoS domain")
                return Answer(text, {"state": items}, (a, b))
        items, spans, pos = [], [], start
        for piece in re.split(r"[\n,;]", core):
            at = text.index(piece, pos) if piece else pos
            pos = at + len(piece)
            match = STATE_ITEM.match(piece)
            if match:
                items.append(re.sub(r"\s*-\s*", "-", match.group(1), count=2))
                spans.append((at + match.start(1), at + match.end(1)))
        if not items:
            return unreadable(text, "no 'domain-slot-value' item with a WoS domain (관광, 숙소, 식당, 지하철, 택시)")
        return Answer(text, {"state": items}, None, "", tuple(spans))

    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        turns = gold.copy()
        turns["pred_state"] = list(predictions)
        stats = [turn_prf(g, p) for g, p in zip(turns["gold_state"], predictions)]
        turns["tp"], turns["fp"], turns["fn"] = [s[0] for s in stats], [s[1] for s in stats], [s[2] for s in stats]
        turns["f1"] = [100.0 * s[3] for s in stats]
        turns["correct"] = [set(g) == set(p) for g, p in zip(turns["gold_state"], predictions)]
        turns["joint"] = turns["correct"]
        broken = turns[~turns["correct"]].groupby("dialogue")["turn"].min()
        turns["first_break"] = turns["turn"] == turns["dialogue"].map(broken)
        turns["turn_bucket"] = np.select([turns["turn"] == 0, turns["turn"] <= 2, turns["turn"] <= 5], ["turn 0", "turns 1-2", "turns 3-5"], "turns 6+")

        slots = self._slot_frame(turns)
        kinds = slots[slots["status"] != "correct"].groupby("guid")["status"].agg(lambda s: ", ".join(sorted(set(s))))
        turns["error_type"] = [kinds.get(g, "correct") for g in turns["guid"]]
        turns["n_slots"] = turns["gold_state"].map(len)
        return Frames(turns, {"slots": slots})

    @staticmethod
    def _slot_frame(turns: pd.DataFrame) -> pd.DataFrame:
        """One row per turn and domain-slot present in gold or prediction."""
        rows = []
        columns = ["guid", "dialogue", "turn", "gold_state", "pred_state", "previous_gold"]
        for guid, dialogue, turn, gold, pred, previous in turns[columns].itertuples(index=False):
            gold_map = {f"{d}-{s}": v for d, s, v in map(split_item, gold)}
            pred_map = {f"{d}-{s}": v for d, s, v in map(split_item, pred)}
            prev_map = {f"{d}-{s}": v for d, s, v in map(split_item, previous)}
            for key in sorted(gold_map.keys() | pred_map.keys()):
                g, p = gold_map.get(key), pred_map.get(key)
                status = "correct" if g == p else "missing" if p is None else "extra" if g is None else "wrong value"
                reference = g if g is not None else p
                rows.append({
                    "guid": guid, "dialogue": dialogue, "turn": turn, "domain_slot": key, "domain": key.split("-", 1)[0],
                    "gold_value": g, "pred_value": p, "status": status, "correct": status == "correct",
                    "value_type": "free text" if value_class(reference) == "value" else value_class(reference),
                    "change": "carried over" if g is not None and prev_map.get(key) == g else ("new or updated" if g is not None else "not in gold"),
                })
        columns = ["guid", "dialogue", "turn", "domain_slot", "domain", "gold_value", "pred_value", "status", "correct", "value_type", "change"]
        return pd.DataFrame(rows, columns=columns)

    def statistics_columns(self) -> dict[str, tuple[str, ...]]:
        return {"examples": ("gold_state", "pred_state", "f1", "dialogue", "turn")}

    def statistics(self, frames: Frames) -> Statistics:
        turns = frames.examples
        return state_statistics(turns["gold_state"].tolist(), turns["pred_state"].tolist())

    def row_statistics(self, gold: list[dict], predictions: list[list[str]]) -> Statistics:
        return state_statistics([row["gold_state"] for row in gold], predictions)

    def detail_statistics_columns(self, level: str) -> tuple[str, ...] | None:
        return ("status",) if level == "slots" else None

    def detail_statistics(self, level: str, frame: pd.DataFrame) -> Statistics:
        if level != "slots":
            return super().detail_statistics(level, frame)
        status = frame["status"]
        tp = (status == "correct").to_numpy(np.float64)
        fp = status.isin(["extra", "wrong value"]).to_numpy(np.float64)
        fn = status.isin(["missing", "wrong value"]).to_numpy(np.float64)
        return prf_statistics(tp, fp, fn)

    def confusion(self, frames: Frames) -> pd.DataFrame:
        slots = frames.details["slots"]
        # A side without a value is NaN in the frame (pandas' string columns), not None: slot_value makes it None again.
        gold = slots["gold_value"].map(lambda v: value_class(slot_value(v)))
        pred = slots["pred_value"].map(lambda v: value_class(slot_value(v)))
        pred = np.where((gold == "value") & (pred == "value") & (slots["status"] == "wrong value"), "other value", pred)
        return pd.DataFrame({"guid": slots["guid"], "gold": gold, "pred": pred})

    def render(self, frames: Frames, guid: str) -> str:
        return self.render_card(frames, [guid])

    def render_card(self, frames: Frames, guids: list[str]) -> str:
        """One dialogue, its turns in order: each user turn's gold state change and the prediction's errors;
        the first turn where the joint goal breaks is marked, the turns in `guids` are highlighted and anchored."""
        first = frames.example(guids[0])
        dialogue = frames.rows(first["dialogue"], by="dialogue").sort_values("turn")
        chosen = set(guids) if set(guids) != set(dialogue["guid"]) else set()  # every turn shown: none singled out
        slots = frames.rows(first["dialogue"], "slots", by="dialogue")
        broken = dialogue[~dialogue["correct"]]
        matched = dialogue[dialogue["guid"].isin(chosen)]
        shown = f"{len(matched)} shown by the filters: {', '.join(map(_jump, matched.itertuples()))}" if chosen else "all shown by the filters"
        summary = f"joint goal first breaks at {_jump(next(broken.itertuples()))}" if len(broken) else "joint goal holds on every turn"
        parts = [mk.row("dialogue", f'<span class="kv-kv">{mk.esc(first["dialogue"])} · {mk.esc(first["domains"])} · '
                                    f'{len(dialogue)} user turns · {shown} · {summary}</span>')]
        previous_errors: set[tuple] = set()
        for turn in dialogue.itertuples():
            if turn.system:
                parts.append(f'<div class="kv-turn" data-role="sys"><span class="kv-side">sys</span>{mk.esc(turn.system)}</div>')
            selected = turn.guid in chosen
            marks = (mk.badge("joint goal breaks here", "wrong") if turn.first_break else "") + (mk.badge("matches the filters", "partial") if selected else "")
            changes = state_changes(turn.previous_gold, turn.gold_state)
            wrong = list(slots[(slots["guid"] == turn.guid) & (slots["status"] != "correct")].itertuples())
            errors = [self._slot_chip(s, turn.turn - 1 if _error_key(s) in previous_errors else None) for s in wrong]
            previous_errors = {_error_key(s) for s in wrong}
            verdict = "".join(errors) if errors else f'<span class="kv-kv">prediction = gold ({len(turn.gold_state)} slots)</span>'
            turn_attrs = mk.attrs(id=f"kv-{turn.guid}", data_role="user", data_joint="ok" if turn.correct else "broken", data_turn=turn.turn,
                                  data_selected="true" if selected else None)
            parts.append(
                f'<div class="kv-turn" {turn_attrs}>'
                f'<span class="kv-side">user {turn.turn}</span>{mk.esc(turn.text)} {marks}'
                f'<div><span class="kv-side">state Δ</span>{"".join(changes) or "<span class=kv-kv>(no change)</span>"}</div>'
                f'<div><span class="kv-side">pred</span>{verdict}<span class="kv-kv"> · slot F1 {turn.f1:.2f}</span></div></div>'
            )
        return mk.example("".join(parts), guids[0])

    @staticmethod
    def _slot_chip(s: Any, carried_from: int | None = None) -> str:  # a row of slots.itertuples()
        """A wrong slot; `carried_from` is the previous turn when the same error (slot, gold, prediction) was there too,
        else the error is new at this turn and gets a "new" badge."""
        if s.status == "missing":
            text = f"{s.domain_slot} = {s.gold_value} (missed)"
        elif s.status == "extra":
            text = f"{s.domain_slot} = {s.pred_value} (extra)"
        else:
            text = f"{s.domain_slot}: gold {s.gold_value} / pred {s.pred_value}"
        attrs = mk.attrs(data_status=s.status.replace(" ", "_"), data_slot=s.domain_slot, data_error="new" if carried_from is None else "carried")
        mark = '<span class="kv-new">new</span> ' if carried_from is None else ""
        note = f'<span class="kv-kv"> · carried from turn {carried_from}</span>' if carried_from is not None else ""
        return f'<span class="kv-slot" {attrs}>{mark}{mk.esc(text)}{note}</span>'

    # ---- discovery --------------------------------------------------------------------------
    def example_scores(self, frames: Frames) -> pd.Series:
        """The turn's slot F1 on 0..1 (the per-turn value the official slot F1 averages)."""
        return frames.examples["f1"] / 100.0

    def sort_orders(self) -> dict[str, Callable[[Frames], pd.Series]]:
        return {"most slot errors first": lambda f: -(f.examples["fp"] + f.examples["fn"]), "lowest slot F1 first": lambda f: f.examples["f1"]}

    def suspect_text(self, row: dict, suspect: Suspect) -> str:
        """The turn (the system's words before it, the user's) and the slot: gold -> proposed."""
        lines = [f"system: {row['system']}"] if row.get("system") else []
        return "\n".join([*lines, f"user (turn {row['turn']}): {row['text']}", f"slot: {suspect.gold} -> {suspect.proposed}"])

    def find_suspects(self, results: Sequence[ScoredRun]) -> list[Suspect]:
        """Slots of a turn every run gets wrong with the same value (or none): `domain-slot-value`, `none` to remove it."""
        n = len(results)
        answers: dict[tuple, list] = defaultdict(list)
        for r in results:
            slots = r.frames.details["slots"]
            wrong = slots[~slots["correct"]]
            for dialogue, turn, slot, gold, pred in wrong[["dialogue", "turn", "domain_slot", "gold_value", "pred_value"]].itertuples(index=False, name=None):
                answers[(dialogue, int(turn), slot, slot_value(gold))].append((r.run, slot_value(pred)))
        out = []
        for (dialogue, turn, slot, gold), given in answers.items():
            values = {v for _, v in given}
            if len(given) < n or len(values) != 1:
                continue
            value = next(iter(values))
            evidence = Evidence(n, n, [run for run, _ in given])
            out.append(suspect_item(dialogue, "slot", f"{slot}-{gold if gold is not None else 'none'}",
                                    f"{slot}-{value if value is not None else 'none'}", n, evidence, turn=turn))
        return out

    def write_patch(self, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                    problems: list[Problem]) -> tuple[str, int]:
        """`domain-slot-value` items set a slot of the correction's turn in the gold state (`none` removes it), in its place."""
        out = []
        for dialogue in read_json(official_text, name):
            guid = str(dialogue.get("guid"))
            wanted = {turn: correction_items(corrections, guid, turn) for (g, turn) in corrections if g == guid}
            if not wanted:
                continue
            turns, user_turn, changed = [], 0, False
            for turn in dialogue["dialogue"]:
                if turn.get("role") == "user":
                    state = list(turn.get("state") or [])
                    for item in wanted.get(user_turn, []):
                        parts = item.strip().split("-", 2)
                        if len(parts) != 3:
                            problems.append(Problem(f"correction {item!r} is not 'domain-slot-value'", guid=f"{guid}-{user_turn}", file=name))
                            continue
                        slot = f"{parts[0]}-{parts[1]}-"
                        at = next((k for k, s in enumerate(state) if s.startswith(slot)), len(state))  # keep the slot's place
                        state = [s for s in state if not s.startswith(slot)]
                        if parts[2] != "none":
                            state.insert(at, item.strip())
                        changed = True
                    turn = {**turn, "state": state}
                    user_turn += 1
                turns.append(turn)
            if changed:
                out.append({**dialogue, "dialogue": turns})
        return dump_json(out), len(out)


def slot_value(value: object) -> str | None:
    """A slot value, None where the side has no value (pandas gives a missing string as NaN, not None)."""
    return None if value is None or pd.isna(value) else str(value)


def _error_key(slot: Any) -> tuple:  # a row of slots.itertuples()
    """What makes two turns' slot errors the same error: the slot, its gold value and its predicted value."""
    return slot.domain_slot, slot.gold_value, slot.pred_value


def _jump(turn: Any) -> str:  # a row of turns.itertuples()
    """A link that scrolls the page to a user turn of the card (its anchor is the turn's id)."""
    return f'<a class="kv-jump" {mk.attrs(href=f"#kv-{turn.guid}")}>user turn {turn.turn}</a>'


def state_changes(previous: list[str], current: list[str]) -> list[str]:
    """Chips for what a user turn changed in the gold state: slots added, changed and removed."""
    before = {f"{d}-{s}": v for d, s, v in map(split_item, previous)}
    after = {f"{d}-{s}": v for d, s, v in map(split_item, current)}
    chips = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        kind, text = ("added", f"+ {key} = {new}") if old is None else ("removed", f"− {key} = {old}") if new is None else ("changed", f"{key}: {old} → {new}")
        chips.append(f'<span class="kv-slot" {mk.attrs(data_change=kind, data_slot=key)}>{mk.esc(text)}</span>')
    return chips


TASK = Wos()

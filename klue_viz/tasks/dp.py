"""KLUE-DP: dependency parsing over eojeol (words); UAS/LAS as micro and macro F1 (klue-tasks.md §6).

Scoring happens on the word frame: head-index macro F1, and LAS over relations merged the
official way (every relation after the first 15 of the baseline list is one 'others' class, and a
word with a wrong head is predicted as the PAD class).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames, ScoredRun
from klue_viz.drawing import markup as mk
from klue_viz.drawing.arcs import Arc, Word, dependency_svg
from klue_viz.metrics.official import DP_LAS_CLASSES, DP_RELATIONS, Statistics, dp_las_classes, dp_statistics
from klue_viz.reading.answers import Answer, json_in, strip_answer, unreadable
from klue_viz.tasks.base import DetailLevel, DrawingDocument, Metric, RecordError, Slice, SurfaceForms, Task, TaskFacts, ViewSettings, as_int, as_list, bucket
from klue_viz.tasks.kit import Evidence, Suspect, correction_items, suspect_item, tsv_blocks
from klue_viz.tasks.probing import ProbeExample, ProbeIO, Span, Unmade
from klue_viz.tasks.surface import surface_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

DEP_LABELS = DP_RELATIONS
KEPT_FOR_LAS = frozenset(DEP_LABELS[:15])
OTHERS, PAD = DP_LAS_CLASSES[-2], DP_LAS_CLASSES[-1]
#: A generated arc line: anything (index, word form), then the head and the relation as its last two fields.
ARC_LINE = re.compile(r"^.*?(?:^|\s)(\d+)[\t ]+([A-Z]+(?:_[A-Z]+)?)\s*$")
#: The index column of a sentence's word lines, as written in the official file.
WORD_INDICES = tuple(str(k) for k in range(1, 1001))
#: The confusion column of words given the right relation but the wrong head (not a label success).
WRONG_HEAD = "wrong head"
#: A stored correction of a word (klue_viz.discovery.patch): `index:head:DEPREL`.
WORD_CORRECTION = re.compile(r"^\s*(\d+):(\d+):([A-Z_]+)\s*$")


def merged(relations: pd.Series) -> pd.Series:
    """The official LAS classes: the first 15 relations stay, the rest become 'others'."""
    return relations.where(relations.isin(KEPT_FOR_LAS), OTHERS)


def word_statistics(words: pd.DataFrame, sentence: np.ndarray, n: int) -> Statistics:
    """DP statistics of word rows, each summed into row `sentence[k]` of n (a sentence, or the word itself)."""
    keep = sentence >= 0
    gold_class = pd.Categorical(words["gold_class"], categories=DP_LAS_CLASSES).codes.astype(np.int64)
    pred_class = pd.Categorical(words["pred_class"], categories=DP_LAS_CLASSES).codes.astype(np.int64)
    return dp_statistics(
        n, sentence[keep], words["gold_head"].to_numpy(np.int64)[keep], words["pred_head"].to_numpy(np.int64)[keep],
        gold_class[keep], pred_class[keep],
    )


def _surface_errors(frames: Frames) -> pd.DataFrame:
    """Errors by surface form: each word form (with its POS) and each POS tag with a wrong head, or the right head and a
    wrong label."""
    words = frames.details["words"]
    error = np.where(~words["head_ok"].astype(bool), "wrong head", np.where(~words["label_ok"].astype(bool), "wrong label", ""))
    wrong = words.assign(error=error)[error != ""]
    by_word = pd.DataFrame({"form": wrong["word_form"].astype(str), "type": wrong["pos"].astype(str), "error": wrong["error"], "guid": wrong["guid"]})
    by_pos = pd.DataFrame({"form": wrong["pos"].astype(str), "type": "", "error": wrong["error"], "guid": wrong["guid"]})
    word_totals = words.groupby([words["word_form"].astype(str), words["pos"].astype(str)]).size().to_dict()
    pos_totals = {(p, ""): n for p, n in words.groupby(words["pos"].astype(str)).size().items()}
    return pd.concat([surface_table(by_word, "word", word_totals), surface_table(by_pos, "POS", pos_totals)], ignore_index=True)


def _drawing_document(frames: Frames, guids: list[str]) -> dict:
    """The card of `guids` as a document for klue_viz.drawing.svg (what to draw, no markup)."""
    guid = guids[0]
    ex = frames.example(guid)
    words = frames.rows(guid, "words")
    arcs = []
    for w in words.itertuples():
        arcs.append({"dependent": int(w.index), "head": int(w.gold_head), "label": w.gold_deprel, "side": "gold", "status": "correct"})
        status = "correct" if w.correct else ("wrong_head" if not w.head_ok else "wrong_label")
        arcs.append({"dependent": int(w.index), "head": int(w.pred_head), "label": w.pred_deprel, "side": "pred", "status": status})
    legend = [{"text": "gold arcs above the words, predicted below", "status": ""}, {"text": "right", "status": "correct"},
              {"text": "wrong head", "status": "wrong"}, {"text": "wrong label", "status": "partial"}]
    notes = [{"side": "score", "text": f"UAS {ex['uas']:.2f} · LAS {ex['las']:.2f}"}]
    return {"kind": "arcs", "text": str(ex["sentence"]), "tokens": [{"form": w.word_form, "lemma": w.lemma, "pos": w.pos} for w in words.itertuples()],
            "arcs": arcs, "notes": notes, "legend": legend}


#: The comment lines that open the official KLUE-DP TSV (kept in a written suite, so it reads as the dev file does).
DP_PREAMBLE = ("## 토큰, 레이블 구분자 : \\t\n## 토큰 구분자 : \\n\n## 문장 구분자 : \\n\\n\n## 주석 : ##\n"
               "## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL")


class DpProbe(ProbeIO):
    """DP sentences for the suites: the words joined by spaces are the text. Only edits that keep every word (a typo)
    apply: spacing would merge or split words, and so change the tree the gold describes. A typo in a word is carried
    into its lemma column (the morphemes of the word, which spell it when joined)."""

    tests = ("typo",)
    edit_fields = ("sentence",)
    file_name = "klue-dp-v1.1_dev.tsv"
    lm_eval = {"output_type": "generate_until",  # the prompt of examples/lm_eval/klue_dp_gen.yaml
               "doc_to_text": "다음 문장의 의존 구문을 분석하세요. 어절마다 한 줄에 '번호 어절 지배소번호 의존관계'를 쓰세요 (지배소 0 = 루트; "
                              "의존관계 예: NP_SBJ, NP_OBJ, VP).\n문장: {{sentence}}\n어절:\n{{words}}\n답:\n",
               "doc_to_target": "{{answer}}", "generation_kwargs": {"until": ["\n\n"], "max_gen_toks": 512}}

    def lm_docs(self, example: ProbeExample) -> list[dict[str, Any]]:
        """The sentence, its numbered words and the gold arcs one per line (examples/lm_eval/klue_utils.dp_docs)."""
        row = example.record
        return [{"guid": example.guid, "sentence": row["sentence"],
                 "words": "\n".join(f"{k} {w}" for k, w in enumerate(row["words"], 1)),
                 "answer": "\n".join(f"{k} {w} {h} {d}" for k, (w, h, d) in enumerate(zip(row["words"], row["heads"], row["deprels"]), 1))}]

    def read(self, text: str, name: str) -> tuple[list[ProbeExample], list[Problem]]:
        rows, problems = TASK.read_official(text, name)
        return [ProbeExample(row["guid"], {"sentence": " ".join(row["words"])}, (), None, row) for row in rows], problems

    def rebuilt(self, example: ProbeExample, guid: str, texts: dict[str, str], spans: tuple[Span, ...], label: Any) -> ProbeExample:
        row = example.record
        words = texts["sentence"].split(" ")
        if len(words) != len(row["words"]):
            raise Unmade("the edit changes the words of the sentence")
        lemmas = list(row["lemmas"])
        for k, (old, new) in enumerate(zip(row["words"], words)):
            if old == new:
                continue
            morphemes = lemmas[k].split(" ")
            if "".join(morphemes) != old or len(old) != len(new):
                raise Unmade("the changed word's lemma column does not spell it")
            pieces, pos = [], 0
            for morpheme in morphemes:
                pieces.append(new[pos:pos + len(morpheme)])
                pos += len(morpheme)
            lemmas[k] = " ".join(pieces)
        new_row = {**row, "guid": guid, "words": words, "lemmas": lemmas, "sentence": texts["sentence"]}
        return ProbeExample(guid, texts, spans, label, new_row)

    def write(self, examples: Sequence[ProbeExample]) -> str:
        blocks = [DP_PREAMBLE]
        for example in examples:
            row = example.record
            lines = [f"## {example.guid}\t{row['sentence']}"]
            lines += [f"{k}\t{w}\t{lm}\t{p}\t{h}\t{d}" for k, (w, lm, p, h, d)
                      in enumerate(zip(row["words"], row["lemmas"], row["pos"], row["heads"], row["deprels"]), 1)]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"

    def answer(self, prediction: Any) -> Hashable:
        return tuple(prediction["heads"]), tuple(prediction["deprels"])


class Dp(Task):
    facts = TaskFacts(
        name="dp",
        title="KLUE-DP dependency parsing",
        guid_prefix="klue-dp-v1",
        metrics=(
            Metric("uas_macro_f1", "UAS macro F1"), Metric("uas_micro_f1", "UAS (micro F1)"),
            Metric("las_macro_f1", "LAS macro F1"), Metric("las_micro_f1", "LAS (micro F1)"),
        ),
        hf_config="dp",
        official_folder="klue-dp-v1.1",
        official_ext="tsv",
        slices=(
            Slice("source", "Source"),
            Slice("sentence_length", "Sentence length"),
            Slice("gold_deprel", "Gold relation", level="words"),
            Slice("last_pos", "Last POS of the word", level="words"),
            Slice("distance", "Dependency distance", level="words"),
        ),
        signature_fields=frozenset({"head", "deprel"}),
        bare_value_field="head",
        unit="sentence",
        text_columns=("sentence",),
        confusion_label="relation",
        error_tags=("attachment", "coordination", "long distance", "relation label", "punctuation", "gold error"),
        hf_has_guid=False,
        detail=DetailLevel("words", "word", "words", ("guid", "index")),
    )
    surface = SurfaceForms(_surface_errors)
    svg_document = DrawingDocument(_drawing_document)
    view = ViewSettings(wide_drawing=True, outcome_columns=(WRONG_HEAD,))
    probe = DpProbe()
    prediction_fields = frozenset({"head", "deprel"})
    answer_parser_version = 1

    # ---- gold -------------------------------------------------------------------------------
    def read_official(self, text: str, name: str) -> tuple[list[dict], list[Problem]]:
        """Sentences of the official TSV: a `## guid<TAB>sentence` line, then one line per word."""
        rows: list[dict] = []
        problems: list[Problem] = []
        lines = text.split("\n")
        headers = [k for k, line in enumerate(lines) if line.startswith("## ")] + [len(lines)]
        for here, after in zip(headers[:-1], headers[1:]):
            guid, tab, sentence = lines[here][3:].partition("\t")
            if not tab or " " in guid.strip():
                continue  # header lines (one of them lists the columns with tabs)
            row: dict = {"guid": guid.strip(), "sentence": sentence}
            columns = self._word_columns([line for line in lines[here + 1:after] if line.strip()])
            if columns is None:  # something is off: read it line by line to say where
                body = [(number, line) for number, line in enumerate(lines[here + 1:after], here + 2) if line.strip()]
                columns = self._word_lines(body, row["guid"], name, problems)
            if columns is None:
                continue
            row.update(zip(("words", "lemmas", "pos", "heads", "deprels"), columns))
            bad = self._bad_head(row)
            if bad:
                problems.append(Problem(f"{bad}; sentence left out", guid=row["guid"], file=name))
            elif row["words"]:
                rows.append(self._finish(row))
        if not rows:
            raise InputError(f"{name}: no sentence found; expected the official KLUE-DP TSV ('## guid<TAB>sentence' then word lines)")
        return rows, problems

    @staticmethod
    def _word_columns(lines: list[str]) -> tuple[list, ...] | None:
        """The word, lemma, POS, head and relation columns of well-formed word lines (indices 1, 2, ...); else None."""
        try:
            index, words, lemmas, pos, heads, deprels = list(zip(*(line.split("\t") for line in lines)))[:6]
            if index != WORD_INDICES[:len(index)]:
                return None
            return list(words), list(lemmas), list(pos), list(map(int, heads)), list(deprels)
        except ValueError:  # fewer than 6 fields on some line, or a head that is not a number
            return None

    @staticmethod
    def _word_lines(body: list[tuple[int, str]], guid: str, name: str, problems: list[Problem]) -> tuple[list, ...] | None:
        """The columns of a sentence read line by line, each bad line a problem (then the sentence is left out)."""
        columns: tuple[list, ...] = ([], [], [], [], [])
        broken = False
        for number, line in body:
            fields = line.split("\t")
            try:
                if len(fields) < 6:
                    raise ValueError(f"expected 6 tab-separated fields (INDEX WORD_FORM LEMMA POS HEAD DEPREL), found {len(fields)}")
                index, head = int(fields[0]), int(fields[4])
                if index != len(columns[0]) + 1:
                    raise ValueError(f"word index {index} out of sequence")
            except ValueError as err:
                problems.append(Problem(str(err), number, guid, name))
                broken = True
                continue
            for column, value in zip(columns, (fields[1], fields[2], fields[3], head, fields[5])):
                column.append(value)
        return None if broken else columns

    @staticmethod
    def _bad_head(row: dict) -> str | None:
        """Why a gold sentence's heads cannot be right: a head outside 0..number of words."""
        n = len(row["words"])
        for k, head in enumerate(row["heads"], 1):
            if not 0 <= head <= n:
                return f"word {k} has head {head}, outside 0..{n} (the sentence has {n} words)"
        return None

    def looks_like_hf(self, record: dict) -> bool:
        return "word_form" in record

    def rows_from_hf(self, records: Iterable[dict], split: str = "dev") -> tuple[list[dict], list[Problem]]:
        rows, problems = [], []
        for k, record in enumerate(records):
            try:
                words = [str(w) for w in record["word_form"]]
                row = {
                    "guid": str(record.get("guid") or self.hf_guid(k, split)),
                    "sentence": str(record["sentence"]),
                    "words": words,
                    "lemmas": [str(x) for x in record["lemma"]],
                    "pos": [str(x) for x in record["pos"]],
                    "heads": [int(h) for h in record["head"]],
                    "deprels": [str(x) for x in record["deprel"]],
                }
                if not len(row["heads"]) == len(row["deprels"]) == len(words):
                    raise ValueError("head, deprel and word_form differ in length")
                bad = self._bad_head(row)
                if bad:
                    raise ValueError(bad)
                rows.append(self._finish(row))
            except (KeyError, TypeError, ValueError, OverflowError) as err:
                problems.append(Problem(f"gold record #{k + 1}: missing or bad field {err}"))
        return rows, problems

    @staticmethod
    def _finish(row: dict) -> dict:
        guid = row["guid"]
        parts = guid.split("_")
        row["source"] = parts[-1] if len(parts) >= 4 else "(unknown)"
        row["n_words"] = len(row["words"])
        return row

    # ---- predictions ------------------------------------------------------------------------
    def parse_prediction(self, record: dict, gold: dict) -> dict:
        n = gold["n_words"]
        if record.get("head") in (None, ""):
            raise RecordError("missing field 'head' (one head index per word, 0 = root)")
        if record.get("deprel") in (None, ""):
            raise RecordError("missing field 'deprel' (one relation per word)")
        given = as_list(record["head"], "head")
        heads = given if all(type(h) is int for h in given) else [as_int(h, f"head[{k}]") for k, h in enumerate(given)]
        deprels = [str(d) for d in as_list(record["deprel"], "deprel")]
        if len(heads) != n or len(deprels) != n:
            raise RecordError(f"head has {len(heads)} and deprel {len(deprels)} entries, expected {n} (one per word of the sentence)")
        bad = [h for h in heads if not 0 <= h <= n]
        if bad:
            raise RecordError(f"head {bad[0]} is outside 0..{n}")
        unknown = sorted(set(deprels) - set(DEP_LABELS))
        if unknown:
            raise RecordError(f"deprel {unknown[0]!r} is not a KLUE-DP relation (e.g. NP_SBJ, VP, NP_OBJ)")
        return {"heads": heads, "deprels": deprels}

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """A parse from a generated text: a JSON object `{"head": [...], "deprel": [...]}`, or one line per word ending in
        its head and relation (`2\t유희열이\t6\tNP_SBJ`, CoNLL-like); lines that are not arcs (explanation) are skipped.
        As many arcs as the sentence has words, or the answer is unreadable."""
        n = gold["n_words"]
        start, end = strip_answer(text, brackets=False)
        found = json_in(text, start, end)
        if found is not None and isinstance(found[0], dict) and {"head", "deprel"} <= found[0].keys():
            return Answer(text, {"head": found[0]["head"], "deprel": found[0]["deprel"]}, (found[1], found[2]))
        heads, deprels, spans, pos = [], [], [], start
        for line in text[start:end].split("\n"):
            at = text.index(line, pos)
            pos = at + len(line)
            match = ARC_LINE.match(line)
            if match:
                heads.append(int(match.group(1)))
                deprels.append(match.group(2))
                spans.append((at, at + len(line.rstrip())))
        if not heads:
            return unreadable(text, "no arcs: expected one line per word ending in its head and relation, or {head, deprel}")
        if len(heads) != n:
            return unreadable(text, f"{len(heads)} arcs for a sentence of {n} words")
        return Answer(text, {"head": heads, "deprel": deprels}, None, "", tuple(spans))

    def empty_prediction(self, gold: dict) -> dict:
        # An empty parse has no arcs: head -1 never matches, so every word counts as wrong.
        return {"heads": [-1] * gold["n_words"], "deprels": [OTHERS] * gold["n_words"]}

    # ---- results ----------------------------------------------------------------------------
    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        counts = gold["n_words"].to_numpy()
        words = pd.DataFrame({
            "guid": np.repeat(gold["guid"].to_numpy(), counts),
            "index": np.concatenate([np.arange(1, c + 1) for c in counts]) if len(counts) else np.array([], dtype=int),
            "word_form": [w for ws in gold["words"] for w in ws],
            "lemma": [w for ws in gold["lemmas"] for w in ws],
            "pos": [w for ws in gold["pos"] for w in ws],
            "gold_head": np.array([h for hs in gold["heads"] for h in hs], dtype=int),
            "gold_deprel": [d for ds in gold["deprels"] for d in ds],
            "pred_head": np.array([h for p in predictions for h in p["heads"]], dtype=int),
            "pred_deprel": [d for p in predictions for d in p["deprels"]],
        })
        words["last_pos"] = words["pos"].str.rsplit("+", n=1).str[-1]
        words["head_ok"] = words["gold_head"] == words["pred_head"]
        words["gold_class"] = merged(words["gold_deprel"])
        words["pred_class"] = merged(words["pred_deprel"]).where(words["head_ok"], PAD)
        words["label_ok"] = merged(words["gold_deprel"]) == merged(words["pred_deprel"])
        words["correct"] = words["head_ok"] & words["label_ok"]
        words["error_type"] = np.select(
            [words["correct"], ~words["head_ok"] & ~words["label_ok"], ~words["head_ok"]],
            ["correct", "wrong head and label", "wrong head"], "wrong label",
        )
        distance = np.where(words["gold_head"] == 0, -1, (words["index"] - words["gold_head"]).abs())
        words["distance"] = pd.Series(
            np.select([distance == -1, distance == 1, distance <= 3, distance <= 7], ["root", "1", "2-3", "4-7"], "8+"), index=words.index
        )

        examples = gold[["guid", "sentence", "source", "n_words"]].copy()
        per = words.assign(head_error=~words["head_ok"], error=~words["correct"]).groupby("guid", sort=False).agg(
            head_errors=("head_error", "sum"), errors=("error", "sum"), uas=("head_ok", "mean"), las=("correct", "mean"),
        )
        examples = examples.join(per, on="guid")
        examples["uas"] *= 100
        examples["las"] *= 100
        examples["correct"] = examples["errors"] == 0
        examples["error_type"] = np.select(
            [examples["correct"], examples["head_errors"] > 0], ["correct", "head errors"], "label errors only"
        )
        examples["sentence_length"] = bucket(examples["n_words"], [0, 5, 10, 20, float("inf")], "words")
        examples["gold_deprels"] = gold["deprels"].map(" ".join)
        examples["pred_deprels"] = [" ".join(p["deprels"]) for p in predictions]
        return Frames(examples, {"words": words})

    def statistics_columns(self) -> dict[str, tuple[str, ...]]:
        return {"examples": ("las",), "words": ("guid", "gold_head", "pred_head", "gold_class", "pred_class")}

    def statistics(self, frames: Frames) -> Statistics:
        words = frames.details["words"]
        sentence = pd.Index(frames.examples["guid"]).get_indexer(words["guid"]).astype(np.int64)
        return word_statistics(words, sentence, len(frames.examples))

    def row_statistics(self, gold: list[dict], predictions: list[dict]) -> Statistics:
        sentence = np.repeat(np.arange(len(gold)), [row["n_words"] for row in gold])
        return dp_statistics(
            len(gold),
            sentence,
            np.fromiter((h for row in gold for h in row["heads"]), dtype=np.int64, count=len(sentence)),
            np.fromiter((h for p in predictions for h in p["heads"]), dtype=np.int64, count=len(sentence)),
            dp_las_classes(d for row in gold for d in row["deprels"]),
            dp_las_classes(d for p in predictions for d in p["deprels"]),
        )

    def detail_statistics_columns(self, level: str) -> tuple[str, ...] | None:
        return ("gold_head", "pred_head", "gold_class", "pred_class") if level == "words" else None

    def detail_statistics(self, level: str, frame: pd.DataFrame) -> Statistics:
        if level != "words":
            return super().detail_statistics(level, frame)
        return word_statistics(frame, np.arange(len(frame), dtype=np.int64), len(frame))

    def confusion(self, frames: Frames) -> pd.DataFrame:
        """Gold relation against the predicted one; a word with the right relation on the wrong head is not a success
        and goes to the `wrong head` column, so the diagonal counts words right in both head and relation."""
        words = frames.details["words"]
        pred = words["pred_deprel"].where(words["head_ok"] | (words["pred_deprel"] != words["gold_deprel"]), WRONG_HEAD)
        return pd.DataFrame({"guid": words["guid"], "gold": words["gold_deprel"], "pred": pred})

    def render(self, frames: Frames, guid: str) -> str:
        words = frames.rows(guid, "words")
        items = [Word(w.word_form, w.lemma, w.pos) for w in words.itertuples()]
        arcs = []
        for w in words.itertuples():
            arcs.append(Arc(int(w.index), int(w.gold_head), w.gold_deprel, "gold", "correct"))
            status = "correct" if w.correct else ("wrong_head" if not w.head_ok else "wrong_label")
            arcs.append(Arc(int(w.index), int(w.pred_head), w.pred_deprel, "pred", status))
        ex = frames.example(guid)
        head = mk.row("text", mk.esc(ex["sentence"]))
        summary = mk.row("score", f'<span class="kv-kv">UAS {ex["uas"]:.2f} · LAS {ex["las"]:.2f} · {int(ex["errors"])} word error(s) — '
                                  f'gold arcs above the words, predicted below; red = wrong head, orange = wrong label</span>')
        return mk.example(head + summary + dependency_svg(items, arcs), guid)

    # ---- discovery --------------------------------------------------------------------------
    def example_scores(self, frames: Frames) -> pd.Series:
        """The sentence's LAS on 0..1 (words right in head and relation)."""
        return frames.examples["las"] / 100.0

    def sort_orders(self) -> dict[str, Callable[[Frames], pd.Series]]:
        return {"most word errors first": lambda f: -f.examples["errors"], "lowest sentence UAS first": lambda f: f.examples["uas"],
                "lowest sentence LAS first": lambda f: f.examples["las"]}

    def suspect_text(self, row: dict, suspect: Suspect) -> str:
        """The sentence, then the suspect's word and its head as the gold has it and as proposed (`index:head:DEPREL`)."""
        words = row["words"]

        def word(index: int) -> str:
            return "ROOT" if index == 0 else f"{index} '{words[index - 1]}'" if 0 < index <= len(words) else str(index)

        try:
            index, gold_head, gold_rel = str(suspect.gold).split(":", 2)
            _, head, rel = str(suspect.proposed).split(":", 2)
            lines = [f"word {word(int(index))}: gold head {word(int(gold_head))} {gold_rel} -> proposed head {word(int(head))} {rel}"]
        except ValueError:
            lines = []
        return "\n".join([row["sentence"], *lines])

    def find_suspects(self, results: Sequence[ScoredRun]) -> list[Suspect]:
        """Words whose head (and relation, where they agree on it) every run predicts alike against the gold: `index:head:DEPREL`."""
        n = len(results)
        words = [r.frames.details["words"].set_index(["guid", "index"]) for r in results]
        shared = words[0].index
        for w in words[1:]:
            shared = shared.intersection(w.index)
        base = words[0].loc[shared]
        heads = np.column_stack([w.loc[shared, "pred_head"].to_numpy() for w in words])
        deprels = np.column_stack([w.loc[shared, "pred_deprel"].astype(str).to_numpy() for w in words])
        gold_head, gold_rel = base["gold_head"].to_numpy(), base["gold_deprel"].astype(str).to_numpy()
        same_head = (heads == heads[:, :1]).all(axis=1)
        same_rel = (deprels == deprels[:, :1]).all(axis=1)
        against = same_head & ((heads[:, 0] != gold_head) | (same_rel & (deprels[:, 0] != gold_rel)))
        out = []
        for k in np.flatnonzero(against):
            guid, index = shared[k]
            rel = deprels[k, 0] if same_rel[k] else gold_rel[k]
            evidence = Evidence(n, n, [r.run for r in results], about={"word": str(base["word_form"].iloc[k])},
                                extra={"pred_deprels": sorted(set(deprels[k]))})
            unit = "head" if heads[k, 0] != gold_head[k] else "relation"
            out.append(suspect_item(guid, unit, f"{index}:{gold_head[k]}:{gold_rel[k]}", f"{index}:{heads[k, 0]}:{rel}", n, evidence))
        return out

    def write_patch(self, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                    problems: list[Problem]) -> tuple[str, int]:
        """`index:head:DEPREL` items set a word's head and relation."""
        out, count = [], 0
        for guid, header, body in tsv_blocks(official_text):
            items = correction_items(corrections, guid)
            if not items:
                continue
            rows = [line.split("\t") for line in body]
            changed = False
            for item in items:
                match = WORD_CORRECTION.match(item)
                if not match or not 1 <= int(match[1]) <= len(rows) or not 0 <= int(match[2]) <= len(rows):
                    problems.append(Problem(f"correction {item.strip()!r} is not 'index:head:DEPREL' within the sentence", guid=guid, file=name))
                    continue
                row = rows[int(match[1]) - 1]
                row[4], row[5] = match[2], match[3]
                changed = True
            if changed:
                out.append(header + "\n" + "".join("\t".join(r) + "\n" for r in rows))
                count += 1
        return "\n".join(out), count


TASK = Dp()

"""The Korean slice features of NER (the particle attached to an entity, the eojeol count of a sentence) by the
hand-written particle list (klue_viz.tasks.kit) and by the kiwipiepy analyzer, on the real NER dev set: how often they
agree, the commonest disagreements, and the CPU seconds of each (issue 30 asks to move them to the analyzer unless
that slows the NER page noticeably).

    python bench/bench_particles.py [--shared ../shared/klue]

The analyzer's particle: the morphemes after the entity up to the end of its eojeol (closing punctuation aside) when
they are all particles (tags J*), joined as written (+에서는), WHOLE when nothing follows, else +other. Its eojeol
count: the distinct (`sent_position`, `word_position`) pairs of the sentence's morphemes (word positions restart at
each sentence the analyzer finds).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from klue_viz.probes import korean
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import WHOLE, attached_particle
from klue_viz.tasks.ner import tag_spans

REPO = Path(__file__).resolve().parents[1]
CLOSING = ".,!?\"')]}”’…"


def analyzer_particle(sentence: str, end: int, found: tuple[korean.Morpheme, ...]) -> str:
    word_end = korean.eojeol_end(sentence, end)
    rest = sentence[end:word_end].rstrip(CLOSING)
    if not rest:
        return WHOLE
    after = [m for m in found if end <= m.start < end + len(rest)]
    if after and after[0].start == end and all(m.tag.startswith("J") for m in after) and after[-1].end == end + len(rest):
        return f"+{rest}"
    return "+other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    args = parser.parse_args()
    path = Path(args.shared) / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv"
    task = get_task("ner")
    rows, _ = task.read_official(path.read_text(encoding="utf-8"), str(path))
    entities = [(row["sentence"], end) for row in rows for _, end, _ in tag_spans(row["tags"])]

    start = time.process_time()
    listed = [attached_particle(sentence, end) for sentence, end in entities]
    split_counts = [len(row["sentence"].split()) for row in rows]
    hand = time.process_time() - start

    start = time.process_time()
    korean.analyzer()
    load = time.process_time() - start
    start = time.process_time()
    analysed = {row["sentence"]: korean.analyzer().tokenize(row["sentence"]) for row in rows}
    morphs = {s: tuple(korean.Morpheme(t.form, t.tag, t.start, t.start + t.len) for t in tokens) for s, tokens in analysed.items()}
    by_analyzer = [analyzer_particle(sentence, end, morphs[sentence]) for sentence, end in entities]
    kiwi_counts = [len({(t.sent_position, t.word_position) for t in analysed[row["sentence"]]}) for row in rows]
    kiwi = time.process_time() - start

    same = sum(a == b for a, b in zip(listed, by_analyzer))
    print(f"NER dev: {len(rows):,} sentences, {len(entities):,} gold entities")
    print(f"particle: the same value for {same:,} of {len(entities):,} entities ({100 * same / len(entities):.1f}%)")
    print("commonest disagreements (list -> analyzer):")
    for (a, b), n in Counter((a, b) for a, b in zip(listed, by_analyzer) if a != b).most_common(12):
        print(f"  {n:5d}  {a} -> {b}")
    equal = sum(a == b for a, b in zip(split_counts, kiwi_counts))
    print(f"eojeol count: the same for {equal:,} of {len(rows):,} sentences ({100 * equal / len(rows):.1f}%)")
    print(f"CPU s: hand-written list {hand:.2f}; analyzer {kiwi:.2f} (+ {load:.2f} to load its model once per process)")


if __name__ == "__main__":
    main()

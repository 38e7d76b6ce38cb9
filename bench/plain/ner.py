"""KLUE-NER entity macro F1 (strict IOB2 spans, per type) and character macro F1 (13 tags, a tag absent from both
sides scores 1) over the non-space characters, of a prediction JSONL (guid, one BIO tag per character)."""
import json
import sys

import numpy as np

TAGS = ["B-DT", "I-DT", "B-LC", "I-LC", "B-OG", "I-OG", "B-PS", "I-PS", "B-QT", "I-QT", "B-TI", "I-TI", "O"]
TAG = {t: k for k, t in enumerate(TAGS)}
O = TAG["O"]


def spans(tags, sentence):
    """(sentence, start, end, type) of each strict IOB2 entity: B-X then every following I-X."""
    out, k = [], 0
    while k < len(tags):
        if tags[k].startswith("B-"):
            kind, end = tags[k][2:], k + 1
            while end < len(tags) and tags[end] == "I-" + kind:
                end += 1
            out.append((sentence, k, end, kind))
            k = end
        else:
            k += 1
    return out


gold = {}
for block in open(sys.argv[1], encoding="utf-8").read().split("\n\n"):
    lines = block.split("\n")
    head = [line for line in lines if line.startswith("## klue")]
    if head:
        gold[head[0][3:].split("\t")[0]] = [line.split("\t") for line in lines if line and not line.startswith("##")]
g, p, gold_spans, pred_spans = [O], [O], set(), set()
for n, record in enumerate(map(json.loads, open(sys.argv[2], encoding="utf-8"))):
    rows = gold.get(record["guid"])
    if rows is None:
        continue
    kept = [(t, q) for (c, t), q in zip(rows, record["tags"]) if c != " "]
    gold_spans.update(spans([t for t, _ in kept], n))
    pred_spans.update(spans([q for _, q in kept], n))
    g += [TAG[t] for t, _ in kept] + [O, O]
    p += [TAG[q] for _, q in kept] + [O, O]
g, p = np.array(g[1:]), np.array(p[1:])
right = g == p
tp, fp, fn = (np.bincount(x, minlength=len(TAGS)) for x in (g[right], p[~right], g[~right]))
char_f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 1.0).mean()
kinds = sorted({s[3] for s in gold_spans | pred_spans})
entity_f1 = []
for kind in kinds:
    gs, ps = {s for s in gold_spans if s[3] == kind}, {s for s in pred_spans if s[3] == kind}
    hits = len(gs & ps)
    entity_f1.append(2 * hits / (len(gs) + len(ps)))
print(json.dumps({"entity_macro_f1": 100 * float(np.mean(entity_f1)), "character_macro_f1": 100 * float(char_f1)}))

"""KLUE-DP UAS and LAS, micro and macro F1, of a prediction JSONL (guid, head, deprel) against the official dev TSV.

Macro F1 over the classes seen in gold or prediction (head values for UAS; for LAS the first 15 relations, every
other one merged into "others", and a word whose head is wrong predicted as PAD)."""
import json
import sys

import numpy as np

KEPT = ["NP", "NP_AJT", "VP", "NP_SBJ", "VP_MOD", "NP_OBJ", "AP", "NP_CNJ", "NP_MOD", "VNP", "DP", "VP_AJT", "VNP_MOD", "NP_CMP", "VP_SBJ"]
CLASS = {r: k for k, r in enumerate(KEPT)}
OTHERS, PAD = len(KEPT), len(KEPT) + 1


def macro_f1(gold, pred, classes):
    right = gold == pred
    tp = np.bincount(gold[right], minlength=classes)
    fp = np.bincount(pred[~right], minlength=classes)
    fn = np.bincount(gold[~right], minlength=classes)
    seen = tp + fp + fn > 0
    return float((2 * tp / np.maximum(2 * tp + fp + fn, 1))[seen].mean())


gold, guid = {}, None
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("## klue-dp"):
        guid = line[3:].split("\t")[0]
        gold[guid] = []
    elif line.strip() and not line.startswith("##"):
        cells = line.rstrip("\n").split("\t")
        gold[guid].append((int(cells[4]), cells[5]))
gh, gr, ph, pr = [], [], [], []
for record in map(json.loads, open(sys.argv[2], encoding="utf-8")):
    words = gold.get(record["guid"])
    if words is None:
        continue
    gh += [h for h, _ in words]
    gr += [CLASS.get(r, OTHERS) for _, r in words]
    ph += record["head"]
    pr += [CLASS.get(r, OTHERS) for r in record["deprel"]]
gh, ph, gr, pr = np.array(gh), np.array(ph), np.array(gr), np.array(pr)
head_ok = gh == ph
pr = np.where(head_ok, pr, PAD)
print(json.dumps({"uas_macro_f1": 100 * macro_f1(gh, ph, int(max(gh.max(), ph.max())) + 1), "uas_micro_f1": 100 * float(head_ok.mean()),
                  "las_macro_f1": 100 * macro_f1(gr, pr, PAD + 1), "las_micro_f1": 100 * float((gr == pr).mean())}))

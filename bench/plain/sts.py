"""KLUE-STS Pearson r and binary F1 (both sides thresholded at 3.0) of a prediction JSONL (guid, score)."""
import json
import sys

import numpy as np

gold = {r["guid"]: r["labels"]["real-label"] for r in json.load(open(sys.argv[1], encoding="utf-8"))}
pairs = np.array([(gold[r["guid"]], r["score"]) for r in map(json.loads, open(sys.argv[2], encoding="utf-8")) if r["guid"] in gold])
g, p = pairs[:, 0], pairs[:, 1]
gb, pb = g >= 3, p >= 3
print(json.dumps({"pearsonr": 100 * float(np.corrcoef(p, g)[0, 1]), "f1": 100 * 2 * float((gb & pb).sum()) / float(gb.sum() + pb.sum())}))

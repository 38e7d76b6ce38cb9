"""KLUE-NLI accuracy of a prediction JSONL (guid, label) against the official dev JSON."""
import json
import sys

import numpy as np

gold = {r["guid"]: r["gold_label"] for r in json.load(open(sys.argv[1], encoding="utf-8"))}
pairs = [(gold[r["guid"]], r["label"]) for r in map(json.loads, open(sys.argv[2], encoding="utf-8")) if r["guid"] in gold]
print(json.dumps({"accuracy": 100 * float(np.mean([g == p for g, p in pairs]))}))

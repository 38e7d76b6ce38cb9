"""WoS joint goal accuracy and slot F1 (the mean over turns of each turn's F1; an empty gold scores 1 when the
prediction is empty too) of a prediction JSONL (guid, turn, state) against the dev JSON."""
import json
import sys

import numpy as np

gold = {}
for dialogue in json.load(open(sys.argv[1], encoding="utf-8")):
    turns = [t for t in dialogue["dialogue"] if t["role"] == "user"]
    for k, turn in enumerate(turns):
        gold[(dialogue["guid"], k)] = set(turn["state"])
joint, slot = [], []
for record in map(json.loads, open(sys.argv[2], encoding="utf-8")):
    want = gold.get((record["guid"], record["turn"]))
    if want is None:
        continue
    got = set(record["state"])
    joint.append(want == got)
    tp, fp, fn = len(want & got), len(got - want), len(want - got)
    slot.append((1.0 if not got else 0.0) if not want else (2 * tp / (2 * tp + fp + fn)))
print(json.dumps({"joint_goal_acc": 100 * float(np.mean(joint)), "slot_micro_f1": 100 * float(np.mean(slot))}))

"""`probe make --format lm-eval`: lm-evaluation-harness tasks over a suite, so an LLM is run on it with the harness.

Two tasks are written under `<suite>/lm_eval/`: `klue_<task>_probes` over the perturbed examples and
`klue_<task>_probe_sources` over their sources, each a `dataset_path: json` task over a JSONL of documents that keep
their KLUE guid; the prompts are the task's (`ProbeIO.lm_eval`, those of examples/lm_eval/). Run both with
`--log_samples` and give the two sample logs to `klue-viz probe score --pred ... --source-pred ...`: klue-viz's
harness reader (klue_viz.scoring.harness) turns the logs into predictions by guid.

The YAML is written by hand rather than with a YAML library: every value is a JSON scalar or list, which YAML reads as is.
"""

from __future__ import annotations

import json
from pathlib import Path

from klue_viz.probes.make import Suite
from klue_viz.tasks.base import Task
from klue_viz.tasks.probing import ProbeExample

FOLDER = "lm_eval"


def task_yaml(name: str, data_file: str, fields: dict) -> str:
    """An lm-evaluation-harness task YAML over one JSONL file (relative to the YAML's folder, as the harness resolves it)."""
    lines = [f"task: {name}", "dataset_path: json", "dataset_kwargs:", "  data_files:", f"    validation: {json.dumps(data_file)}",
             "validation_split: validation"]
    lines += [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
    lines += ["metric_list:", "  - metric: exact_match"]
    return "\n".join(lines) + "\n"


def write_lm_eval(task: Task, suite: Suite, out: Path, sources: list[ProbeExample]) -> list[Path]:
    """The harness tasks and their documents under `out/lm_eval/`; the paths written."""
    probe = task.probe
    if probe is None or probe.lm_eval is None:
        raise KeyError(f"{task.facts.name} has no lm-evaluation-harness prompt")
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    name = task.facts.name
    for kind, examples in (("probes", [case.example for case in suite.cases]), ("probe_sources", sources)):
        docs = folder / f"{name}_{kind}.jsonl"
        docs.write_text("".join(json.dumps(doc, ensure_ascii=False) + "\n" for e in examples for doc in probe.lm_docs(e)), encoding="utf-8")
        yaml = folder / f"klue_{name}_{kind}.yaml"
        yaml.write_text(task_yaml(f"klue_{name}_{kind}", str(docs.resolve()), probe.lm_eval), encoding="utf-8")
        written += [docs, yaml]
    with (out / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(f"\n## lm-evaluation-harness\n\n`{FOLDER}/klue_{name}_probes.yaml` (the perturbed examples) and "
                     f"`{FOLDER}/klue_{name}_probe_sources.yaml` (their sources), over the JSONL documents beside them:\n\n"
                     f"    lm_eval --model ... --include_path {FOLDER} --tasks klue_{name}_probes,klue_{name}_probe_sources --log_samples "
                     "--output_path logs/\n\nthen `klue-viz probe score --task "
                     f"{name} --probes . --pred logs/<model>/samples_klue_{name}_probes_<time>.jsonl "
                     f"--source-pred logs/<model>/samples_klue_{name}_probe_sources_<time>.jsonl`.\n")
    return written

"""Running the real evaluation harnesses offline over a local KLUE-NLI file, for the harness tests and for
`scripts/make_harness_fixtures.py`: lm-evaluation-harness with its `dummy` model (random log-likelihoods,
"lol" as every generation) and Inspect AI with its `mockllm/model` (the outputs we give it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: KLUE-NLI labels in Hugging Face order and the Korean answers the prompts ask for.
HF_ORDER = ("entailment", "neutral", "contradiction")
KOREAN = {"entailment": "참", "neutral": "중립", "contradiction": "거짓"}

PROMPT = "전제: {{premise}}\\n가설: {{hypothesis}}\\n질문: 전제가 참이면 가설은 참, 거짓, 중립 중 무엇입니까?\\n정답:"

MC_TEXT = """task: klue_nli_mc
dataset_path: json
dataset_kwargs:
  data_files:
    validation: {data}
validation_split: validation
output_type: multiple_choice
doc_to_text: "{prompt}"
doc_to_choice: ["참", "중립", "거짓"]
doc_to_target: "{{{{ ['entailment', 'neutral', 'contradiction'].index(gold_label) }}}}"
metric_list:
  - metric: acc
"""
#: Choices that name no label (A/B/C): mapped by index, which agrees with the gold (Hugging Face order).
MC_INDEX = MC_TEXT.replace("klue_nli_mc", "klue_nli_mc_index").replace('["참", "중립", "거짓"]', '["A", "B", "C"]')
#: The same, with the target in the baseline's order (entailment, contradiction, neutral): the index disagrees with the gold.
MC_BAD_INDEX = MC_INDEX.replace("klue_nli_mc_index", "klue_nli_mc_baseline_order").replace(
    "['entailment', 'neutral', 'contradiction']", "['entailment', 'contradiction', 'neutral']")
#: Documents without their guid (process_docs drops it): matched by position.
MC_NO_GUID = MC_TEXT.replace("klue_nli_mc", "klue_nli_mc_noguid").replace(
    "output_type: multiple_choice", "output_type: multiple_choice\nprocess_docs: !function utils.drop_guid")
GEN = """task: klue_nli_gen
dataset_path: json
dataset_kwargs:
  data_files:
    validation: {data}
validation_split: validation
output_type: generate_until
doc_to_text: "{prompt}"
doc_to_target: "{{{{ {{'entailment': '참', 'neutral': '중립', 'contradiction': '거짓'}}[gold_label] }}}}"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 16
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "(참|거짓|중립)"
      - function: take_first
  - name: flexible
    filter:
      - function: take_first
metric_list:
  - metric: exact_match
"""
UTILS = '''def drop_guid(dataset):
    """The documents without their guid column, as a Hugging Face dataset built without one would be."""
    return dataset.remove_columns(["guid"])
'''
TASKS = ("klue_nli_mc", "klue_nli_mc_index", "klue_nli_mc_baseline_order", "klue_nli_mc_noguid", "klue_nli_gen")


def lm_eval_binary() -> str | None:
    """The lm_eval command of the running interpreter's environment, if lm-evaluation-harness is installed."""
    found = Path(sys.executable).with_name("lm_eval")
    return str(found) if found.exists() else shutil.which("lm_eval")


def write_tasks(folder: Path, data_file: Path) -> None:
    """The task YAMLs (and their utils.py) over one local KLUE-NLI JSON file."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, template in (("mc", MC_TEXT), ("mc_index", MC_INDEX), ("mc_baseline_order", MC_BAD_INDEX), ("mc_noguid", MC_NO_GUID), ("gen", GEN)):
        (folder / f"klue_nli_{name}.yaml").write_text(template.format(data=data_file, prompt=PROMPT), encoding="utf-8")
    (folder / "utils.py").write_text(UTILS, encoding="utf-8")


def run_lm_eval(tasks_dir: Path, out_dir: Path, tasks: tuple[str, ...] = TASKS, limit: int | None = 40) -> Path:
    """Run lm_eval offline with the dummy model and --log_samples; the folder it wrote the samples and results to."""
    command = [lm_eval_binary() or "lm_eval", "--model", "dummy", "--tasks", ",".join(tasks), "--include_path", str(tasks_dir),
               "--log_samples", "--output_path", str(out_dir), "--seed", "1234"]
    if limit is not None:
        command += ["--limit", str(limit)]
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "HF_DATASETS_CACHE": str(out_dir / "hf-cache")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"lm_eval failed ({done.returncode}):\n{done.stderr[-3000:]}")
    folders = sorted({p.parent for p in out_dir.rglob("results_*.json")})
    if len(folders) != 1:
        raise RuntimeError(f"expected one results folder under {out_dir}, found {folders}")
    return folders[0]


def run_inspect(rows: list[dict], outputs: list[str], log_dir: Path, log_format: str = "json") -> Path:
    """Run Inspect AI's mockllm/model over NLI rows (its output for row k is outputs[k]); the log file it wrote."""
    script = f"""
import json
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

rows = json.loads({json.dumps(json.dumps(rows, ensure_ascii=False))})
outputs = json.loads({json.dumps(json.dumps(outputs, ensure_ascii=False))})
korean = {json.dumps(KOREAN, ensure_ascii=False)}

def output(text):
    out = ModelOutput.from_content(model="mockllm/model", content=text)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download for counting
    return out

samples = [Sample(input=f"전제: {{r['premise']}}\\n가설: {{r['hypothesis']}}\\n참, 거짓, 중립 중 무엇입니까?",
                  target=korean[r["gold_label"]], id=r["guid"]) for r in rows]
task = Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match(), name="klue_nli")
model = get_model("mockllm/model", custom_outputs=[output(t) for t in outputs])
logs = inspect_eval(task, model=model, log_dir={json.dumps(str(log_dir))}, log_format={json.dumps(log_format)}, display="none")
assert logs[0].status == "success", logs[0].status
print(logs[0].location)
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "INSPECT_LOG_LEVEL": "warning"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"inspect eval failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return Path(done.stdout.strip().splitlines()[-1].removeprefix("file://"))

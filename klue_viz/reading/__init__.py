"""Reading bytes into records: prediction and gold file containers (`records`), upload limits and
names (`uploads`), which gold folders may be read (`gold_folders`), the Hugging Face hub probe (`hf_hub`),
the answer-parsing machinery for generated text (`answers`) and the embedded demo's files (`demo`).
May import: core.
"""

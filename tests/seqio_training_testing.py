"""Shared helpers of the t2t.seqio_training tests: a copy task over TSV files.

    paths = write_copy_tsv(tmp_path, {"train": 400, "validation": 16})
    add_copy_tsv_task("copy_tsv", paths)      # inputs/targets: bytes, exact_match metric
    copy_tasks_module("cli_copy", paths)      # the same task as a --module_import module
"""
import random

import tensorflow as tf

from t2t import seqio
from t2t.seqio import preprocessors

BYTES = seqio.ByteVocabulary()
FEATURES = {"inputs": seqio.Feature(BYTES), "targets": seqio.Feature(BYTES)}


def write_copy_tsv(folder, sizes, seed=0, letters="abcd", max_len=5):
    """{"train": n, ...} -> {split: path} of "word<TAB>word" lines (copy pairs)."""
    rng = random.Random(seed)
    paths = {}
    for split, size in sorted(sizes.items()):
        lines = []
        for _ in range(size):
            word = "".join(rng.choice(letters) for _ in range(rng.randint(1, max_len)))
            lines.append("%s\t%s" % (word, word))
        path = folder / ("copy_%s.tsv" % split)
        path.write_text("\n".join(lines) + "\n")
        paths[split] = str(path)
    return paths


def parse_tsv(line):
    fields = tf.strings.split(line, "\t")
    return {"inputs": fields[0], "targets": fields[1]}


def add_copy_tsv_task(name, paths, metric_fns=(seqio.metrics.exact_match,)):
    return seqio.TaskRegistry.add(
        name, seqio.TextLineDataSource(paths),
        preprocessors=[seqio.map_over_dataset(parse_tsv), preprocessors.tokenize,
                       preprocessors.append_eos],
        output_features=FEATURES, metric_fns=list(metric_fns))




_TASKS_MODULE = '''
import tensorflow as tf
from t2t import seqio

BYTES = seqio.ByteVocabulary()


def parse_tsv(line):
    fields = tf.strings.split(line, "\\t")
    return {"inputs": fields[0], "targets": fields[1]}


def upper(text, example=None, is_target=False):
    return text.upper()


seqio.TaskRegistry.add(
    %(name)r, seqio.TextLineDataSource(%(paths)r),
    preprocessors=[seqio.map_over_dataset(parse_tsv), seqio.preprocessors.tokenize,
                   seqio.preprocessors.append_eos],
    output_features={"inputs": seqio.Feature(BYTES), "targets": seqio.Feature(BYTES)},
    postprocess_fn=upper, metric_fns=[seqio.metrics.exact_match])
'''


def copy_tasks_module(name, paths):
    """The source of a module registering the copy task `name` over {split: path}, with an
    upper-casing postprocessor (so decodes show they went through it), for the programs'
    --module_import."""
    return _TASKS_MODULE % {"name": name, "paths": dict(paths)}

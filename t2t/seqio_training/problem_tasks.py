"""T2T Problems as SeqIO Tasks: a problem's generated TFRecords, read by SeqIO.

Also reachable as `seqio.add_t2t_problem_task` / `seqio.t2t_problem_source` (loaded on first
use, so `from t2t import seqio` alone loads no Problem code).

After `t2t-datagen --problem=P --data_dir=D`, P's data is a Task that mixes with any other:

    task = seqio.add_t2t_problem_task("translate_ende_wmt8k", data_dir="/data/t2t")
    task.get_dataset(split="validation").take(1)
    # {"inputs": int32 [n] (P's ids, EOS at the end), "targets": int32 [m]}
    seqio.MixtureRegistry.add("mix", [("translate_ende_wmt8k", 1), ("my_tsv_task", 1)])

The splits are "train", "validation" (T2T's dev files) and "test", those with files on
disk. By default the features keep the problem's ids, with `T2TVocabulary` over its
encoders; with `vocabulary=...` the stored ids are decoded to text with the problem's
encoders (in the graph) and tokenized again with that vocabulary, EOS appended, so the
problem joins a Mixture of tasks that share another vocabulary (e.g. SentencePiece).
"""
import functools
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.problems import problem as problem_lib
from t2t.problems import spaces
import t2t.seqio.dataset_providers as dataset_providers
import t2t.seqio.preprocessors as seqio_preprocessors
from t2t.seqio import sources
from t2t.seqio.t2t_vocabulary import T2TVocabulary
import t2t.seqio.utils as utils
from t2t.seqio.vocabularies import Vocabulary

# SeqIO split -> T2T dataset split.
SPLITS = (("train", spaces.DatasetSplit.TRAIN),
          ("validation", spaces.DatasetSplit.EVAL),
          ("test", spaces.DatasetSplit.TEST))


def _as_problem(problem):
    if isinstance(problem, str):
        return registry.problem(problem)
    if not isinstance(problem, problem_lib.Problem):
        raise ValueError("expected a T2T Problem or a registered problem name, got %r"
                         % (problem,))
    return problem


def t2t_problem_source(problem, data_dir: str) -> sources.TFExampleDataSource:
    """A TFExampleDataSource over the problem's TFRecords in `data_dir`.

    Raises UserError when no split has data files (run t2t-datagen first).
    """
    problem = _as_problem(problem)
    split_to_filepattern = {}
    for seqio_split, t2t_split in SPLITS:
        pattern = problem.filepattern(data_dir, t2t_split)
        if tf.io.gfile.glob(pattern):
            split_to_filepattern[seqio_split] = pattern
    if not split_to_filepattern:
        raise errors.UserError(
            "no data files of problem %s in %s (looked for %s); run t2t-datagen --problem=%s "
            "--data_dir=%s first" % (problem.name, data_dir,
                                     problem.filepattern(data_dir, "train"), problem.name,
                                     data_dir))
    data_fields, _ = problem.example_reading_spec()
    return sources.TFExampleDataSource(split_to_filepattern, dict(data_fields))


def _decode_t2t_example(problem, example):
    """Parsed record -> dense features as Problem.dataset gives them (int64 -> int32)."""
    _, decoders = problem.example_reading_spec()
    dense = {k: tf.sparse.to_dense(v) if isinstance(v, tf.sparse.SparseTensor) else v
             for k, v in example.items()}
    if decoders is not None:
        dense = {name: decoder(dense) for name, decoder in sorted(decoders.items())}
    dense = problem.maybe_reverse_and_copy(dict(dense))
    return {k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v for k, v in dense.items()}


def _ids_to_text(example, vocabularies):
    """Replaces each feature of `vocabularies` by its text (decoded T2T ids)."""
    out = dict(example)
    for key, vocab in vocabularies.items():
        out[key] = vocab.decode_tf(example[key])
    return out


def add_t2t_problem_task(problem: Union[str, Any], data_dir: str, name: Optional[str] = None,
                         vocabulary: Optional[Union[Vocabulary, Mapping[str, Vocabulary]]]
                         = None,
                         preprocessors: Sequence[Callable[..., tf.data.Dataset]] = (),
                         shuffle_buffer_size: Optional[int] = dataset_providers.SHUFFLE_BUFFER_SIZE,
                         metric_fns: Optional[Sequence[Callable[..., Any]]] = None,
                         postprocess_fn: Optional[Callable[..., Any]] = None,
                         register: bool = True,
                         metric_objs: Optional[Sequence[Any]] = None) -> dataset_providers.Task:
    """A Task over a T2T problem's generated data (registered unless `register=False`).

    Args:
      problem: a registered problem name (`_rev`/`_copy` suffixes work) or instance.
      data_dir: where t2t-datagen wrote the problem's files and vocabulary.
      name: the task name (default: the problem's name).
      vocabulary: None keeps the problem's ids (features get `T2TVocabulary`s of its
        encoders); a Vocabulary (or {feature: Vocabulary}) re-tokenizes the text with it.
      preprocessors: more preprocessors, run after the bridge's own.
      shuffle_buffer_size, metric_fns, postprocess_fn, metric_objs: as for `Task`.
      register: add the task to `TaskRegistry`.

    Returns:
      The Task, with output features "inputs" (when the problem has inputs) and "targets".
    """
    problem = _as_problem(problem)
    source = t2t_problem_source(problem, data_dir)
    problem.get_feature_encoders(data_dir)
    hparams = problem.get_hparams()  # its vocabulary/vocab_size follow _rev and _copy
    encoders = dict(hparams.vocabulary)
    sizes = dict(getattr(hparams, "vocab_size", None) or {})
    keys = [k for k in ("inputs", "targets") if k in encoders and k in source.feature_description]
    if "targets" not in keys:
        raise errors.UserError("problem %s has no targets encoder or no stored targets; a "
                               "SeqIO task needs text-like inputs/targets" % problem.name)
    problem_vocabs = {k: T2TVocabulary(encoders[k], vocab_size=sizes.get(k)) for k in keys}
    steps = [utils.map_over_dataset(functools.partial(_decode_t2t_example, problem))]
    if vocabulary is None:
        vocabs = problem_vocabs
    else:
        vocabs = (dict(vocabulary) if isinstance(vocabulary, Mapping)
                  else {k: vocabulary for k in keys})
        missing = [k for k in keys if k not in vocabs]
        if missing:
            raise ValueError("add_t2t_problem_task: no vocabulary for feature %s of problem %s"
                             % (missing, problem.name))
        steps += [utils.map_over_dataset(functools.partial(
                      _ids_to_text, vocabularies={k: problem_vocabs[k] for k in keys})),
                  seqio_preprocessors.tokenize, seqio_preprocessors.append_eos]
    output_features = {k: utils.Feature(vocabulary=vocabs[k], add_eos=True) for k in keys}
    task = dataset_providers.Task(
        name or problem.name, source, output_features,
        preprocessors=steps + list(preprocessors), postprocess_fn=postprocess_fn,
        metric_fns=metric_fns, metric_objs=metric_objs, shuffle_buffer_size=shuffle_buffer_size)
    if register:
        dataset_providers.TaskRegistry.add_provider(task.name, task)
    return task

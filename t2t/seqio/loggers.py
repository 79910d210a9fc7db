"""seqio.loggers: where the Evaluator writes each task's metrics and model outputs.

The Evaluator calls every logger once per task and evaluation:

    logger(task_name="copy", step=500, metrics={"exact_match": Scalar(87.5)},
           dataset=task_ds, inferences={"output": [...], "prediction": [...]},
           targets=["a b", ...])

- `TensorBoardLogger(output_dir)`: event files under `<output_dir>/<task>/`, tag
  `eval/<metric>` (scalars, text, images, audio, histograms).
- `JSONLogger(output_dir, write_n_results=None)`: appends `{"step": 500, "exact_match":
  87.5}` as one line to `<output_dir>/<task>-metrics.jsonl` (rewritten under a temporary
  name, then renamed) and writes the examples with their target and inferences to
  `<output_dir>/<task>-000500.jsonl`, one JSON object per line:
  `{"input": {...task features...}, "target": "a b", "output": "a b", "prediction": "a b"}`.
- `PyLoggingLogger(output_dir, level=logging.INFO)`: one log line per metric.
- `TensorBoardLoggerV1(output_dir)`: scalars with a TF1 FileWriter.

Names, file names and formats are seqio 0.0.20's, so tools reading seqio's logs read
t2t's. t2t addition: a `TensorBoardLogger` whose class attribute `write_n_examples` is
k > 0 (e.g. `ExamplesTensorBoardLogger`, k=3, what t2t-trainer's task evaluation uses)
also writes the first k examples' inputs, targets and predictions as a markdown text
summary `eval/examples`.
"""
import abc
import base64
import dataclasses
import itertools
import json
import os
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Type

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
import t2t.seqio.metrics as metrics_lib


def skip_none_value_dict_factory(data: Sequence[Tuple[str, Any]]) -> Dict[str, Any]:
    """A dataclasses.asdict factory that leaves out None values."""
    return {k: v for k, v in data if v is not None}


def _numpy_examples(dataset):
    for example in dataset.as_numpy_iterator():
        yield example


class Logger(abc.ABC):
    """Base class of loggers: `output_dir`, and `__call__` per task and evaluation."""

    def __init__(self, output_dir):
        self.output_dir = output_dir

    @abc.abstractmethod
    def __call__(self, task_name: str, step: Optional[int],
                 metrics: Mapping[str, metrics_lib.MetricValue],
                 dataset: Optional[tf.data.Dataset],
                 inferences: Optional[Mapping[str, Sequence[Any]]],
                 targets: Optional[Sequence[Any]]) -> None:
        """Log `metrics` (and optionally the outputs) of `task_name` at `step`."""


def _step_or_default(step):
    if step is None:
        logging.warning("Step number for the logging session is not provided. A dummy value "
                        "of -1 will be used.")
        return -1
    return int(step)


class PyLoggingLogger(Logger):
    """Writes each metric as a Python log line: "copy/exact_match at step 500: 87.500"."""

    def __init__(self, output_dir: str, level: int = logging.INFO):
        self._level = level
        super().__init__(output_dir)

    def __call__(self, task_name, step, metrics, dataset, inferences, targets) -> None:
        del dataset, inferences, targets
        step = step or -1
        for metric_name, metric_value in metrics.items():
            if isinstance(metric_value, metrics_lib.Scalar):
                text = "%.3f" % float(np.array(metric_value.value))
            elif isinstance(metric_value, metrics_lib.Text):
                text = metric_value.textdata
            else:
                text = "unloggable type %s" % type(metric_value)
            logging.log(self._level, "%s/%s at step %d: %s", task_name, metric_name, step, text)


def _as_text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.dtype.kind in "SO" and value.ndim == 0:
        return _as_text(value.item())
    return str(value if not isinstance(value, np.ndarray) else value.tolist())


def examples_markdown(dataset, targets, predictions, num_examples):
    """A markdown table of the first examples: inputs, target, prediction."""
    rows = ["| inputs | targets | predictions |", "|---|---|---|"]
    examples = _numpy_examples(dataset) if dataset is not None else itertools.repeat({})
    for example, target, prediction in itertools.islice(
            zip(examples, targets, predictions), num_examples):
        inputs = example.get("inputs_pretokenized", example.get("inputs", ""))
        cells = [_as_text(inputs), _as_text(target), _as_text(prediction)]
        rows.append("| %s |" % " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                            for c in cells))
    return "\n".join(rows)


class TensorBoardLogger(Logger):
    """Writes metrics as TensorBoard summaries in `<output_dir>/<task_name>/`, tag `eval/NAME`."""

    # t2t: the number of examples written as the text summary `eval/examples`.
    write_n_examples = 0

    def __init__(self, output_dir: str):
        super().__init__(output_dir)
        self._summary_writers = {}

    def _get_summary_writer(self, summary_dir: str):
        if summary_dir not in self._summary_writers:
            self._summary_writers[summary_dir] = tf.summary.create_file_writer(
                summary_dir, flush_millis=120)
        return self._summary_writers[summary_dir]

    def _write_metric(self, tag: str, value: metrics_lib.MetricValue, step: int, writer):
        with writer.as_default():
            if isinstance(value, metrics_lib.Scalar):
                tf.summary.scalar(name=tag, data=float(np.array(value.value)), step=step)
            elif isinstance(value, metrics_lib.Image):
                tf.summary.image(name=tag, data=tf.convert_to_tensor(value.image), step=step,
                                 max_outputs=value.max_outputs)
            elif isinstance(value, metrics_lib.Audio):
                tf.summary.audio(name=tag, data=tf.convert_to_tensor(value.audiodata,
                                                                     dtype=tf.float32),
                                 sample_rate=value.sample_rate, step=step,
                                 max_outputs=value.max_outputs, encoding="wav")
            elif isinstance(value, metrics_lib.Histogram):
                tf.summary.histogram(name=tag, data=np.array(value.values), step=step,
                                     buckets=value.bins)
            elif isinstance(value, metrics_lib.Text):
                if not isinstance(value.textdata, (str, bytes)):
                    raise ValueError("`textdata` should be of the type `str` or `bytes`.")
                tf.summary.text(name=tag, data=tf.constant(value.textdata), step=step)
            elif isinstance(value, metrics_lib.Generic):
                tf.summary.write(tag=tag, tensor=value.tensor, metadata=value.metadata,
                                 step=step)
            else:
                raise TypeError("Value type not understood, got '%s'." % type(value).__name__)

    def __call__(self, task_name, step, metrics, dataset, inferences, targets) -> None:
        step = _step_or_default(step)
        # Eager summaries, also when called while a graph (an Estimator's) is the default.
        with tf.init_scope():
            writer = self._get_summary_writer(os.path.join(self.output_dir, task_name))
            for metric_name, metric_value in metrics.items():
                self._write_metric("eval/%s" % metric_name, metric_value, step, writer)
            predictions = (inferences or {}).get("prediction")
            if self.write_n_examples and targets and predictions:
                table = examples_markdown(dataset, targets, predictions,
                                          self.write_n_examples)
                self._write_metric("eval/examples", metrics_lib.Text(table), step, writer)
            writer.flush()


class ExamplesTensorBoardLogger(TensorBoardLogger):
    """A TensorBoardLogger that also writes 3 examples as the text summary `eval/examples`."""

    write_n_examples = 3


class TensorBoardLoggerV1(Logger):
    """Writes Scalar metrics with a TF1 `FileWriter` in `<output_dir>/<task_name>/`."""

    def __init__(self, output_dir: str):
        super().__init__(output_dir)
        self._summary_writers = {}

    def _get_summary_writer(self, task_name: str):
        if task_name not in self._summary_writers:
            with tf.Graph().as_default():
                self._summary_writers[task_name] = tf.compat.v1.summary.FileWriter(
                    os.path.join(self.output_dir, task_name))
        return self._summary_writers[task_name]

    def __call__(self, task_name, step, metrics, dataset, inferences, targets) -> None:
        del dataset, inferences, targets
        step = _step_or_default(step)
        writer = self._get_summary_writer(task_name)
        for metric_name, metric_value in metrics.items():
            if not isinstance(metric_value, metrics_lib.Scalar):
                raise ValueError("Value for metric '%s' should be of type 'Scalar, got '%s'."
                                 % (metric_name, type(metric_value).__name__))
            summary = tf.compat.v1.Summary()
            tag = "eval/%s" % metric_name
            logging.info("%s at step %d: %.3f", tag, step, metric_value.value)
            summary.value.add(tag=tag, simple_value=metric_value.value)
            writer.add_summary(summary, step)
        writer.flush()


class TensorAndNumpyEncoder(json.JSONEncoder):
    """JSON for tensors, numpy arrays (large ones summarized), numpy scalars, bytes and
    dataclasses."""

    def __init__(self, *args, max_ndarray_size=32, **kwargs):
        self.max_ndarray_size = max_ndarray_size
        super().__init__(*args, **kwargs)

    def default(self, obj):
        if isinstance(obj, tf.Tensor):
            if obj.dtype == tf.bfloat16:
                obj = tf.cast(obj, tf.float32)
            obj = obj.numpy()
        if isinstance(obj, np.ndarray):
            dtype = obj.dtype
            if obj.dtype.kind == "S" or obj.dtype == object:
                obj = np.vectorize(_as_text, otypes=[object])(obj) if obj.size else obj
            if obj.size <= self.max_ndarray_size:
                return obj.tolist()
            flat = obj.reshape([-1])
            return "%s(shape=%s, dtype=%s); summary: %s ... %s" % (
                type(obj).__name__, obj.shape, dtype, str(flat[:5].tolist())[1:-1],
                str(flat[-5:].tolist())[1:-1])
        if isinstance(obj, (np.number, np.bool_)):
            return obj.item()
        if isinstance(obj, bytes):
            try:
                return obj.decode("utf-8")
            except UnicodeDecodeError:
                return base64.b64encode(obj).decode("ascii")
        if dataclasses.is_dataclass(obj):
            return dataclasses.asdict(obj, dict_factory=skip_none_value_dict_factory)
        return json.JSONEncoder.default(self, obj)


def _json_serializable(field_name, value, encoder_cls) -> bool:
    try:
        json.dumps(value, cls=encoder_cls)
        return True
    except (TypeError, ValueError):
        logging.warning("`%s` is not JSON serializable", field_name)
        return False


class JSONLogger(Logger):
    """Writes metrics to `<task>-metrics.jsonl` and model outputs to `<task>-<step:06>.jsonl`."""

    def __init__(self, output_dir: str, write_n_results: Optional[int] = None,
                 json_encoder_cls: Type[json.JSONEncoder] = TensorAndNumpyEncoder):
        super().__init__(output_dir)
        self._write_n_results = write_n_results
        self._json_encoder_cls = json_encoder_cls

    def __call__(self, task_name, step, metrics, dataset, inferences, targets) -> None:
        step = _step_or_default(step)
        tf.io.gfile.makedirs(self.output_dir)
        metrics_fname = os.path.join(self.output_dir, "%s-metrics.jsonl" % task_name)
        serializable = {}
        for name, value in metrics.items():
            if isinstance(value, metrics_lib.Scalar):
                serializable[name] = value.value
            elif isinstance(value, metrics_lib.Text):
                serializable[name] = value.textdata
            elif isinstance(value, metrics_lib.Generic):
                serializable[name] = value.tensor.tolist()
            else:
                logging.warning("Skipping JSON logging of non-serializable metric '%s' of "
                                "type %s.", name, type(value))
        if metrics:
            contents = ""
            if tf.io.gfile.exists(metrics_fname):
                with tf.io.gfile.GFile(metrics_fname, "r") as f:
                    contents = f.read()
            with atomic_files.atomic_output_path(metrics_fname) as temp, \
                    tf.io.gfile.GFile(temp, "w") as f:
                f.write(contents)
                f.write(json.dumps({"step": step, **serializable}, cls=self._json_encoder_cls))
                f.write("\n")

        if self._write_n_results == 0:
            return
        if not inferences or not targets or dataset is None:
            logging.info("Skipping inference logging of %s (no inferences, targets or "
                         "dataset)", task_name)
            return
        inferences_fname = os.path.join(self.output_dir, "%s-%06d.jsonl" % (task_name, step))
        kinds = [k for k in inferences if k != "aux_value"]
        aux_values = inferences.get("aux_value") or {}
        rows = itertools.zip_longest(_numpy_examples(dataset), targets,
                                     *[inferences.get(k) for k in kinds])
        if self._write_n_results:
            rows = itertools.islice(rows, 0, self._write_n_results)
        with atomic_files.atomic_output_path(inferences_fname) as temp, \
                tf.io.gfile.GFile(temp, "w") as f:
            for index, (example, *results) in enumerate(rows):
                if example is None:
                    continue
                record = {"input": example}
                for field, result in zip(["target"] + kinds, results):
                    if _json_serializable(field, result, self._json_encoder_cls):
                        record[field] = result
                for name, values in aux_values.items():
                    if _json_serializable(name, values[index], self._json_encoder_cls):
                        record["aux_%s" % name] = values[index]
                f.write(json.dumps(record, cls=self._json_encoder_cls) + "\n")

"""A TyDi QA jsonl.gz file -> window features, in parallel processes, with a summary.

    spec = PipelineSpec(TokenizerSpec("codepoints"), WindowConfig(), max_passages=45,
                        training=True, seed=1)
    stream = FeatureStream("tydiqa-v1.0-train.jsonl.gz", spec, num_processes=2)
    for features in stream:           # {feature: int64 array}, in file order
        ...
    stream.summary.line()
    # "train: 1,000 examples, 987 used, 4,210 windows (MINIMAL 612, PASSAGE 101, YES 20,
    #  NO 9, UNKNOWN 3,468); skipped 13 (minimal_answer_mismatch 11, answer_has_no_tokens 2)"
    stream.examples[0]                # ExampleInfo(example_index=0, example_id=..., ...)

Worker processes parse, preprocess, tokenize and plan the windows of chunks of lines;
the plans come back in file order and become features in this process, and every random choice uses a `random.Random` seeded by (seed, example id),
so the output is the same whatever the number of processes.
"""
import collections
import dataclasses
import itertools
import multiprocessing
import random
from typing import List, Optional, Tuple

from absl import logging

from t2t.core.progress import Progress
from t2t.tydiqa import data
from t2t.tydiqa import preprocess
from t2t.tydiqa import records as records_lib
from t2t.tydiqa import tokenizers
from t2t.tydiqa import windows as windows_lib


@dataclasses.dataclass(frozen=True)
class PipelineSpec:
    """Everything a worker needs to turn lines into features."""
    tokenizer: tokenizers.TokenizerSpec
    window: windows_lib.WindowConfig
    max_passages: int = 45
    training: bool = True
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class ExampleInfo:
    """What the decoder needs of each example, windows or not."""
    example_index: int
    example_id: int
    language: str
    candidates: Tuple[Tuple[int, int], ...]
    num_windows: int
    skipped: str = ""

    def to_json(self):
        return {"example_index": self.example_index, "example_id": self.example_id,
                "language": self.language, "candidates": [list(c) for c in self.candidates],
                "num_windows": self.num_windows, "skipped": self.skipped}

    @classmethod
    def from_json(cls, value):
        return cls(value["example_index"], value["example_id"], value["language"],
                   tuple(tuple(c) for c in value["candidates"]), value["num_windows"],
                   value.get("skipped", ""))


@dataclasses.dataclass
class Summary:
    """Counts of one pass: examples read, used, windows by label, skips by reason."""
    name: str = ""
    examples: int = 0
    used: int = 0
    windows: int = 0
    positions: int = 0
    answer_types: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def line(self):
        types = ", ".join("%s {:,}".format(self.answer_types[t.name]) % t.name
                          for t in data.AnswerType if self.answer_types[t.name])
        text = "%s: {:,} examples, {:,} used, {:,} windows".format(
            self.examples, self.used, self.windows) % self.name
        if types:
            text += " (%s)" % types
        skipped = sum(self.skipped.values())
        text += "; skipped {:,}".format(skipped)
        if skipped:
            text += " (%s)" % ", ".join("%s {:,}".format(n) % reason
                                        for reason, n in sorted(self.skipped.items()))
        return text

    def as_dict(self):
        return {"examples": self.examples, "used": self.used, "windows": self.windows,
                "positions": self.positions, "answer_types": dict(self.answer_types),
                "skipped": dict(self.skipped)}


def process_example(spec, tokenizer, example_index, line, where):
    """One jsonl line -> (ExampleInfo, WindowPlan or None, number of context positions)."""
    example = data.parse_line(line, where)
    candidates = tuple((c.start_byte, c.end_byte) for c in example.candidates)
    try:
        entry = preprocess.prepare_example(example, spec.max_passages)
        positions = tokenizer.tokenize_context(entry.context)
        rng = random.Random("%d/%d" % (spec.seed, example.example_id))
        plan = windows_lib.plan_windows(entry, tokenizer, spec.window, example_index,
                                        spec.training, rng=rng, positions=positions)
    except preprocess.SkipExample as skip:
        logging.debug("skipped example %d: %s", example.example_id, skip)
        return (ExampleInfo(example_index, example.example_id, example.language, candidates,
                            0, skip.reason), None, 0)
    return (ExampleInfo(example_index, example.example_id, example.language, candidates,
                        len(plan.windows)), plan, len(positions.ids))


_WORKER = {}


def _worker_tokenizer(spec):
    key = spec.tokenizer
    if key not in _WORKER:
        _WORKER.clear()
        _WORKER[key] = key.build()
    return _WORKER[key]


def _process_chunk(args):
    """[(ExampleInfo, WindowPlan or None, positions, serialized records or None)]."""
    spec, path, chunk, serialize = args
    tokenizer = _worker_tokenizer(spec)
    results = []
    for index, number, line in chunk:
        info, plan, num_positions = process_example(spec, tokenizer, index, line,
                                                    "%s:%d" % (path, number))
        records = None
        if serialize and plan is not None:
            records = [records_lib.serialize_int64_example(window)
                       for window in windows_lib.materialize(plan)]
            plan = dataclasses.replace(plan, ids=None, document_start=None,
                                       document_end=None)  # only the labels travel
        results.append((info, plan, num_positions, records))
    return results


def _chunks(lines, size):
    iterator = iter(lines)
    while True:
        chunk = list(itertools.islice(iterator, size))
        if not chunk:
            return
        yield chunk


class FeatureStream:
    """Iterates the window features of a file; then `summary` and `examples` are set.

    With `serialize`, yields serialized `tf.train.Example` bytes made in the workers.
    """

    def __init__(self, path, spec, num_processes=1, max_examples=None, chunk_size=16,
                 name=None, serialize=False):
        self.path = path
        self.serialize = serialize
        self.spec = spec
        self.num_processes = max(1, int(num_processes or 1))
        self.max_examples = max_examples
        self.chunk_size = chunk_size
        self.summary = Summary(name or ("train" if spec.training else "dev"))
        self.examples: List[ExampleInfo] = []

    def _numbered_lines(self):
        for index, (number, line) in enumerate(data.read_lines(self.path, self.max_examples)):
            yield index, number, line

    def _results(self):
        chunks = ((self.spec, self.path, chunk, self.serialize)
                  for chunk in _chunks(self._numbered_lines(), self.chunk_size))
        processes = self.num_processes
        if processes > 1 and multiprocessing.current_process().daemon:
            logging.warning("tydiqa: running inside a daemonic worker; preprocessing in one "
                            "process instead of %d", processes)
            processes = 1
        if processes == 1:
            for chunk in chunks:
                yield from _process_chunk(chunk)
            return
        # "spawn": the parent may have initialised TensorFlow, which is not fork-safe;
        # the workers import only the pure-Python pipeline.
        context = multiprocessing.get_context("spawn")
        with context.Pool(processes) as pool:
            # At most a few chunks in flight (Pool.imap would read the whole file ahead).
            pending = collections.deque()
            for chunk in chunks:
                pending.append(pool.apply_async(_process_chunk, (chunk,)))
                if len(pending) >= 4 * processes:
                    yield from pending.popleft().get()
            while pending:
                yield from pending.popleft().get()

    def __iter__(self):
        summary = self.summary
        progress = Progress("tydiqa %s %s" % (summary.name, self.path), unit="examples")
        for info, plan, num_positions, records in self._results():
            if records is not None:
                features = records
            else:
                # Windows are built here from the compact plan: sending them between
                # processes would copy each context position once per overlapping window.
                features = windows_lib.materialize(plan) if plan is not None else []
            self.examples.append(info)
            summary.examples += 1
            summary.positions += num_positions
            if info.skipped:
                summary.skipped[info.skipped] += 1
            elif features:
                summary.used += 1
            summary.windows += len(features)
            for window in (plan.windows if plan is not None else ()):
                summary.answer_types[data.AnswerType(window[5]).name] += 1
            progress.update(1, windows=len(features))
            yield from features
        progress.done()
        logging.info("tydiqa %s", summary.line())


def run(path, spec, num_processes=1, max_examples: Optional[int] = None):
    """Process a whole file: (list of feature dicts, Summary, [ExampleInfo])."""
    stream = FeatureStream(path, spec, num_processes=num_processes, max_examples=max_examples)
    features = list(stream)
    return features, stream.summary, stream.examples

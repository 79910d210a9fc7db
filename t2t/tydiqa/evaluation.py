"""The official TyDi QA primary-task metrics (passage selection and minimal answer).

    gold = read_gold("tydiqa-v1.0-dev.jsonl.gz")          # {example_id: [Label per annotator]}
    predictions = read_predictions("predictions.jsonl")    # {example_id: Label}
    result = evaluate(gold, predictions)
    result.per_language["thai"].minimal.f1                  # best-threshold F1
    result.averages()["avg_minimal_f1"]                     # macro over languages but English

The rules are `tydi_eval.py`'s:

* gold has a passage (minimal) answer when at least `passage_non_null_threshold`
  (`minimal_non_null_threshold`) annotators, default 2, give one (a YES/NO counts as a
  minimal answer);
* a passage prediction is correct when its index equals a non-null annotator's index;
* a minimal prediction scores 1.0 when its YES/NO matches an annotator's, else the best
  byte-overlap F1 over the annotators' spans (precision = overlap / predicted bytes,
  recall = overlap / gold bytes);
* per language the predictions are sorted by score and every score is tried as a
  threshold (P = sum of scores / predictions with an answer, R = sum / gold with an
  answer); the best F1 is reported with its P and R, plus the best recall at precision
  >= 0.5, 0.75 and 0.9;
* the final figures are the plain average of the per-language ones over the languages
  that have predictions, English excluded.

Worked example: gold span bytes [10, 20) by 2 annotators, prediction [15, 25) with score
1.0: overlap 5 bytes, P = 5/10, R = 5/10, F1 = 0.5, so that language's minimal F1 is 0.5.

Two fixes over the reference (see docs/t2t_differences.md): a prediction line without
"minimal_answer" is a null span (the reference crashed on an undefined variable), and an
example without a prediction line counts as a null prediction (the reference counted it
as *predicting* an answer when gold had none, lowering precision).
"""
import collections
import dataclasses
import glob
import json
from typing import Dict, List, Optional

from t2t.core import errors
from t2t.tydiqa import data

PRECISION_TARGETS = (0.5, 0.75, 0.9)
DEFAULT_NON_NULL_THRESHOLD = 2
# tydi_eval's order; English is reported but left out of the averages.
LANGUAGE_ORDER = ("english", "arabic", "bengali", "finnish", "indonesian", "japanese",
                  "swahili", "korean", "russian", "telugu", "thai")


class PredictionFormatError(errors.UserError):
    """A predictions or gold file that does not follow the official format."""


@dataclasses.dataclass(frozen=True)
class Span:
    """Byte span [start, end); (-1, -1) is null."""
    start: int = -1
    end: int = -1

    def __post_init__(self):
        if (self.start < 0) != (self.end < 0):
            raise ValueError("inconsistent null span (%d, %d): both offsets must be -1 or "
                             "neither" % (self.start, self.end))
        if self.start >= 0 and self.start > self.end:
            raise ValueError("invalid span (%d, %d): start after end" % (self.start, self.end))

    @property
    def is_null(self):
        return self.start < 0


@dataclasses.dataclass(frozen=True)
class Label:
    """An annotator's label or a prediction."""
    example_id: int
    language: str
    passage_index: int = -1
    minimal: Span = Span()
    yes_no: str = "none"
    passage_score: float = 0.0
    minimal_score: float = 0.0


def partial_match(gold, prediction):
    """(precision, recall, f1) of the bytes two non-null spans share.

        partial_match(Span(10, 20), Span(15, 25))    # (0.5, 0.5, 0.5)
    """
    if gold.is_null or prediction.is_null:
        raise ValueError("partial_match needs two non-null spans")
    overlap = min(gold.end, prediction.end) - max(gold.start, prediction.start)
    if overlap <= 0:
        return 0.0, 0.0, 0.0
    precision = overlap / (prediction.end - prediction.start)
    recall = overlap / (gold.end - gold.start)
    return precision, recall, 2 * precision * recall / (precision + recall)


def gold_has_passage(labels, threshold=DEFAULT_NON_NULL_THRESHOLD):
    return bool(labels) and sum(label.passage_index >= 0 for label in labels) >= threshold


def gold_has_minimal(labels, threshold=DEFAULT_NON_NULL_THRESHOLD):
    return bool(labels) and sum((not label.minimal.is_null) or label.yes_no != "none"
                                for label in labels) >= threshold


@dataclasses.dataclass(frozen=True)
class Stat:
    """One example's contribution: gold/predicted answer, its score in [0, 1], and the
    prediction's confidence used for thresholds."""
    has_gold: bool
    has_pred: bool
    value: float
    score: float
    precision: float = 0.0
    recall: float = 0.0


def score_passage(gold, prediction, threshold=DEFAULT_NON_NULL_THRESHOLD):
    has_gold = gold_has_passage(gold, threshold)
    if prediction is None:
        return Stat(has_gold, False, 0.0, 0.0)
    has_pred = prediction.passage_index >= 0
    correct = has_gold and has_pred and any(
        label.passage_index >= 0 and label.passage_index == prediction.passage_index
        for label in gold)
    return Stat(has_gold, has_pred, float(correct), prediction.passage_score)


def score_minimal(gold, prediction, threshold=DEFAULT_NON_NULL_THRESHOLD):
    has_gold = gold_has_minimal(gold, threshold)
    if prediction is None:
        return Stat(has_gold, False, 0.0, 0.0)
    has_pred = (not prediction.minimal.is_null) or prediction.yes_no != "none"
    best = (0.0, 0.0, 0.0)
    if has_gold and has_pred:
        if prediction.yes_no != "none":
            if any(label.yes_no == prediction.yes_no for label in gold):
                best = (1.0, 1.0, 1.0)
        else:
            for label in gold:
                if label.minimal.is_null:
                    continue
                scores = partial_match(label.minimal, prediction.minimal)
                if scores[2] > best[2]:
                    best = scores
    return Stat(has_gold, has_pred, best[2], prediction.minimal_score, best[0], best[1])


@dataclasses.dataclass(frozen=True)
class Figures:
    """Best-threshold F1/P/R and recall at precision targets."""
    f1: float
    precision: float
    recall: float
    threshold: float
    recall_at_precision: Dict[float, float]
    num_gold: int
    num_pred: int


def pr_curve(stats: List[Stat], targets=PRECISION_TARGETS) -> Figures:
    """Sweep score thresholds from high to low; the best F1 and the recall at each
    precision target (tydi_eval's `compute_pr_curves`)."""
    stats = sorted(stats, key=lambda s: s.score, reverse=True)
    total_gold = sum(s.has_gold for s in stats)
    total_value = total_pred = 0.0
    points = collections.OrderedDict()
    for stat in stats:
        total_value += stat.value
        total_pred += stat.has_pred
        precision = total_value / total_pred if total_pred else 0.0
        recall = total_value / total_gold if total_gold else 0.0
        points[stat.score] = (precision, recall)  # ties: the last one counts them all
    best = (0.0, 0.0, 0.0, 0.0)
    at_precision = {target: 0.0 for target in targets}
    for threshold, (precision, recall) in points.items():
        for target in targets:
            if precision >= target and recall > at_precision[target]:
                at_precision[target] = recall
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if f1 > best[0]:
            best = (f1, precision, recall, threshold)
    return Figures(best[0], best[1], best[2], best[3], at_precision, total_gold,
                   int(sum(s.has_pred for s in stats)))


@dataclasses.dataclass(frozen=True)
class LanguageResult:
    language: str
    num_examples: int
    passage: Figures
    minimal: Figures


@dataclasses.dataclass(frozen=True)
class Result:
    per_language: Dict[str, LanguageResult]
    num_gold: int
    num_predictions: int
    missing: int
    unexpected: int

    def averages(self):
        """The macro averages over every language with predictions but English."""
        langs = [r for name, r in self.per_language.items() if name != "english"]

        def mean(values):
            values = list(values)
            return sum(values) / len(values) if values else 0.0

        return {
            "avg_passage_f1": mean(r.passage.f1 for r in langs),
            "avg_passage_precision": mean(r.passage.precision for r in langs),
            "avg_passage_recall": mean(r.passage.recall for r in langs),
            "avg_minimal_f1": mean(r.minimal.f1 for r in langs),
            "avg_minimal_precision": mean(r.minimal.precision for r in langs),
            "avg_minimal_recall": mean(r.minimal.recall for r in langs),
        }


def evaluate(gold: Dict[int, List[Label]], predictions: Dict[int, Label],
             passage_non_null_threshold=DEFAULT_NON_NULL_THRESHOLD,
             minimal_non_null_threshold=DEFAULT_NON_NULL_THRESHOLD) -> Result:
    """Score `predictions` against `gold` per language (see the module docstring)."""
    gold_by_language = collections.defaultdict(dict)
    for example_id, labels in gold.items():
        gold_by_language[labels[0].language][example_id] = labels
    predicted_languages = {p.language for p in predictions.values()}
    per_language = collections.OrderedDict()
    extra = sorted(predicted_languages - set(LANGUAGE_ORDER))
    for language in list(LANGUAGE_ORDER) + extra:
        if language not in predicted_languages:
            continue
        language_gold = gold_by_language.get(language, {})
        passage, minimal = [], []
        for example_id, labels in language_gold.items():
            prediction = predictions.get(example_id)
            if prediction is not None and prediction.language != language:
                prediction = None
            passage.append(score_passage(labels, prediction, passage_non_null_threshold))
            minimal.append(score_minimal(labels, prediction, minimal_non_null_threshold))
        per_language[language] = LanguageResult(language, len(language_gold),
                                                pr_curve(passage), pr_curve(minimal))
    return Result(per_language, len(gold), len(predictions),
                  missing=len(set(gold) - set(predictions)),
                  unexpected=len(set(predictions) - set(gold)))


# ----------------------------------------------------------------------------- files
def _json_lines(path):
    for number, line in data.read_lines(path):
        try:
            yield number, json.loads(line)
        except ValueError as error:
            raise PredictionFormatError("%s:%d: not JSON (%s)" % (path, number, error))


def _paths(pattern, what):
    paths = sorted(glob.glob(pattern))
    if not paths:
        raise PredictionFormatError("%s %s does not exist; give a path or glob of jsonl(.gz) "
                                    "files" % (what, pattern))
    return paths


def read_gold(pattern) -> Dict[int, List[Label]]:
    """{example_id: [one Label per annotation]} from (gzipped) TyDi QA jsonl files."""
    gold = {}
    for path in _paths(pattern, "--gold_path"):
        for number, raw in _json_lines(path):
            example = data.parse_example(raw, "%s:%d" % (path, number))
            gold[example.example_id] = [
                Label(example.example_id, example.language, a.passage_index,
                      _span(a.minimal_start_byte, a.minimal_end_byte, path, number),
                      a.yes_no.lower())
                for a in example.annotations]
    return {k: v for k, v in gold.items() if v}


def _span(start, end, path, number):
    try:
        return Span(int(start), int(end))
    except (TypeError, ValueError) as error:
        raise PredictionFormatError("%s:%d: %s" % (path, number, error))


def _float(raw, key, path, number):
    try:
        return float(raw.get(key, 0.0))
    except (TypeError, ValueError):
        raise PredictionFormatError("%s:%d: %s is %r; expected a number" %
                                    (path, number, key, raw.get(key)))


@dataclasses.dataclass(frozen=True)
class PredictionFiles:
    """What `read_prediction_files` read: the predictions and what to tell the user.

    `duplicates` lists the example_id of every line after the first for its example, in
    file order; the last line of an example wins, as in tydi_eval's dict of predictions.
    """
    predictions: Dict[int, Label]
    paths: List[str]
    lines: int
    duplicates: List[int]

    def warnings(self) -> List[str]:
        """One-line warnings for duplicate example_ids and for no prediction at all."""
        found = []
        if not self.lines:
            found.append("no prediction was read from %s; every gold example is scored as "
                         "a null answer" % ", ".join(self.paths))
        if self.duplicates:
            found.append("%d prediction lines repeat an example_id already predicted (%d "
                         "example_ids, the first %d); the last line of each is scored, as "
                         "tydi_eval does" % (len(self.duplicates), len(set(self.duplicates)),
                                             self.duplicates[0]))
        return found


def read_prediction_files(pattern) -> PredictionFiles:
    """Predictions from every file `pattern` (a path or a glob) matches, in name order."""
    predictions, duplicates, lines = {}, [], 0
    paths = _paths(pattern, "--predictions_path")
    for path in paths:
        for number, raw in _json_lines(path):
            label = _prediction(raw, path, number)
            lines += 1
            if label.example_id in predictions:
                duplicates.append(label.example_id)
            predictions[label.example_id] = label
    return PredictionFiles(predictions, paths, lines, duplicates)


def read_predictions(pattern) -> Dict[int, Label]:
    """{example_id: Label} from predictions jsonl files (a path or glob) in the official
    format; a repeated example_id keeps its last line."""
    return read_prediction_files(pattern).predictions


def _prediction(raw, path, number) -> Label:
    if not isinstance(raw, dict) or "example_id" not in raw or "language" not in raw:
        raise PredictionFormatError("%s:%d: a prediction needs example_id and language" %
                                    (path, number))
    minimal = raw.get("minimal_answer") or {}
    span = _span(minimal.get("start_byte_offset", -1), minimal.get("end_byte_offset", -1),
                 path, number)
    yes_no = str(raw.get("yes_no_answer", "NONE")).lower()
    if yes_no not in ("yes", "no", "none"):
        raise PredictionFormatError("%s:%d: yes_no_answer %r; expected YES, NO or NONE" %
                                    (path, number, raw.get("yes_no_answer")))
    if yes_no != "none" and not span.is_null:
        raise PredictionFormatError("%s:%d: a YES/NO prediction must have a null minimal "
                                    "span" % (path, number))
    example_id = int(raw["example_id"])
    return Label(
        example_id, str(raw["language"]).lower(), int(raw.get("passage_answer_index", -1)),
        span, yes_no, _float(raw, "passage_answer_score", path, number),
        _float(raw, "minimal_answer_score", path, number))


def report_lines(result: Result) -> List[str]:
    """Human-readable lines: one per language and task, then the averages."""
    lines = []
    for language, item in result.per_language.items():
        for task, figures in (("passage", item.passage), ("minimal", item.minimal)):
            rap = " ".join("R@P%.2g %.3f" % (t, r) for t, r in
                           sorted(figures.recall_at_precision.items()))
            lines.append("%-10s %-7s F1 %.3f P %.3f R %.3f (threshold %.4g; %s; %d gold, "
                         "%d predicted answers, %d examples)" %
                         (language, task, figures.f1, figures.precision, figures.recall,
                          figures.threshold, rap, figures.num_gold, figures.num_pred,
                          item.num_examples))
    averages = result.averages()
    count = len([name for name in result.per_language if name != "english"])
    lines.append("macro average over %d languages (English excluded): passage F1 %.3f P "
                 "%.3f R %.3f, minimal F1 %.3f P %.3f R %.3f" %
                 (count, averages["avg_passage_f1"], averages["avg_passage_precision"],
                  averages["avg_passage_recall"], averages["avg_minimal_f1"],
                  averages["avg_minimal_precision"], averages["avg_minimal_recall"]))
    return lines


def evaluate_files(gold_path, predictions_path, passage_non_null_threshold=2,
                   minimal_non_null_threshold=2) -> Optional[Result]:
    return evaluate(read_gold(gold_path), read_predictions(predictions_path),
                    passage_non_null_threshold, minimal_non_null_threshold)

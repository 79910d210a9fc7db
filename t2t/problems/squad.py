"""SQuAD v1.1 question answering (T2T 1.15.7's `squad`).

    t2t-datagen --problem=squad --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `train-v1.1.json` (train) and `dev-v1.1.json` (dev) from
rajpurkar.github.io/SQuAD-explorer/dataset into --tmp_dir (a copy already there is used)
and makes one example per question, its target the first answer:

| problem                            | example                                                  |
|------------------------------------|----------------------------------------------------------|
| squad                              | `{"inputs": question, "context": paragraph, "targets": answer}` |
| squad_concat                       | squad's files; inputs become question + [<EOQ> id 2] + context when read |
| squad_concat_multi64k              | the same, languagemodel_de_en_fr_ro_wiki64k's vocabulary, files `squad_multi64k` |
| squad_concat_shared_vocab          | the same, languagemodel_en_wiki32k's vocabulary, files `squad` |
| squad_concat_positioned            | squad_concat with targets [start, length] of each place the answer's ids occur in the context's |
| squad_text2text                    | `{"inputs": "squad context: <paragraph> question: <question>", "targets": answer}` |
| squad_text2text_multi64k_packed1k  | that, de_en_fr_ro_wiki64k's vocabulary, 1024-long packs  |
"""
import json
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)
from t2t.problems import wiki_lm

_DEV_SET = "dev-v1.1.json"
_URL = "https://rajpurkar.github.io/SQuAD-explorer/dataset"
_TRAINING_SET = "train-v1.1.json"


def _generate_examples(tmp_dir, dataset_split, url=_URL):
    """Every question of the split's file as a dict: version, title, context, question, id,
    answer_starts, answers, num_answers, is_supervised (all but three unused here)."""
    file_name = _TRAINING_SET if dataset_split == spaces.DatasetSplit.TRAIN else _DEV_SET
    squad_file = download.maybe_download(tmp_dir, file_name, url + "/" + file_name)
    with tf.io.gfile.GFile(squad_file) as fp:
        squad = json.load(fp)
    version = squad["version"]
    for article in squad["data"]:
        title = article["title"].strip() if "title" in article else "no title"
        for paragraph in article["paragraphs"]:
            context = paragraph["context"].strip()
            for qa in paragraph["qas"]:
                answers = [answer["text"].strip() for answer in qa["answers"]]
                yield {
                    "version": version,
                    "title": title,
                    "context": context,
                    "question": qa["question"].strip(),
                    "id": qa["id"],
                    "answer_starts": [answer["answer_start"] for answer in qa["answers"]],
                    "answers": answers,
                    "num_answers": len(answers),
                    "is_supervised": True,
                }


class _SquadData:
    """Where the SQuAD files come from; one call of generate_samples makes one split."""

    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    url = _URL

    @property
    def is_generate_per_split(self):
        return True

    def _examples(self, tmp_dir, dataset_split):
        return _generate_examples(tmp_dir, dataset_split, self.url)


@registry.register_problem
class SquadText2text(_SquadData, text2text.Text2TextProblem):
    """Squad as a Text2TextProblem."""

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for example in self._examples(tmp_dir, dataset_split):
            yield {"inputs": "squad context: %s question: %s" % (example["context"],
                                                                 example["question"]),
                   "targets": example["answers"][0]}


@registry.register_problem
class SquadText2textMulti64kPacked1k(wiki_lm.Multi64kPacked1kMixin, SquadText2text):
    """Squad with multi-lingual vocabulary."""

    @property
    def num_training_examples(self):
        return 16300


@registry.register_problem
class Squad(_SquadData, text2text.QuestionAndContext2TextProblem):
    """Base class for SquAD question answering problem."""

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for example in self._examples(tmp_dir, dataset_split):
            yield {"inputs": example["question"], "targets": example["answers"][0],
                   "context": example["context"]}


def concat_question_and_context(example, separator_id):
    """inputs := inputs + [separator_id] + context (a tf example dict, changed in place)."""
    sep = tf.convert_to_tensor([separator_id], dtype=example["inputs"].dtype)
    example["inputs"] = tf.concat([example["inputs"], sep, example["context"]], 0)
    return example


@registry.register_problem
class SquadConcat(Squad):
    """Squad with question and context concatenated together in inputs."""

    def dataset_filename(self):
        return "squad"

    def preprocess_example(self, example, unused_mode, unused_model_hparams):
        return concat_question_and_context(example, self.QUESTION_SEPARATOR_ID)

    def hparams(self, defaults, unused_model_hparams):
        super().hparams(defaults, unused_model_hparams)
        p = defaults
        del p.modality["context"]
        del p.vocab_size["context"]


@registry.register_problem
class SquadConcatMulti64k(SquadConcat):
    """Squad with question and context concatenated, multi-lingual vocabulary."""

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 100},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    def preprocess_example(self, example, unused_mode, unused_model_hparams):
        example = concat_question_and_context(example, self.QUESTION_SEPARATOR_ID)
        example.pop("context")
        return example

    def dataset_filename(self):
        return "squad_multi64k"

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@registry.register_problem
class SquadConcatSharedVocab(SquadConcatMulti64k):
    """Squad with question and context concatenated, English wiki 32k vocabulary."""

    def dataset_filename(self):
        return "squad"

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelEnWiki32k()


@registry.register_problem
class SquadConcatPositioned(SquadConcat):
    """SquadConcat with targets in format of answer position + answer length."""

    def generate_targets(self, targets, context):
        """[start, length] of each place `targets` (EOS dropped) occurs in `context`.

            generate_targets([7, 8, 1], [5, 7, 8, 9, 7, 8, 1]) -> [1, 2, 4, 2]
        """
        targets = targets[:-1]  # skip last terminal symbol.
        targets_new = []
        for i in range(len(context) - len(targets)):
            if context[i:i + len(targets)] == targets:
                targets_new += [i, len(targets)]
        return targets_new

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        samples = super().generate_encoded_samples(data_dir, tmp_dir, dataset_split)
        for sample in samples:
            sample["targets"] = self.generate_targets(sample["targets"], sample["context"])
            if sample["targets"]:  # answers not found in the context are left out
                yield sample

"""bAbI question answering, question and story concatenated (T2T 1.15.7's `babi_qa`).

    t2t-datagen --problem=babi_qa_concat_task1_1k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `tasks_1-20_v1-2.tar.gz` (Weston et al. 2015) into --tmp_dir, extracts it and reads
`tasks_1-20_v1-2/<subset>/qa<N>_<task>_{train,test}.txt` (train, dev). A story is numbered
lines; a line with tabs is a question, its answer and supporting facts:

    1 Mary moved to the bathroom.
    2 Where is Mary? <TAB>bathroom<TAB>1

Each question is one example: `{"inputs": question ids + [EOS], "context": ids of the story so
far + [EOS], "targets": [answer id]}`, words split by T2T's tokenizer ("Mary ?"). The answer
is a class: an id of the problem's token vocabulary `vocab.<dataset_filename>.tokens`
("<pad>", "<EOS>", then every word of the train and test files, most frequent first). When
read, inputs become question + [<EOQ> id 2] + context.

Registered, for the subsets "en" (`_1k`) and "en-10k" (`_10k`): `babi_qa_concat_all_tasks_1k`
(every task) and `babi_qa_concat_task{1..20}_1k`, and the same `_10k`. As in T2T they train
jointly: the training split of every problem is all 20 tasks (`qa0_all-tasks_train.txt`, the
tasks' files joined), its dev split its own task's test file; a list answer ("apple,milk")
is one token ("applemilk"). An archive or extracted folder in --tmp_dir is used as it is.
"""
import collections
import glob
import os

import tensorflow as tf

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import registry
from t2t.encoders import escaping
from t2t.encoders import text_encoder
from t2t.encoders import tokenizer
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import ptb
from t2t.problems import spaces
from t2t.problems import squad
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

_DIR_NAME = "tasks_1-20_v1-2"
_TAR = _DIR_NAME + ".tar.gz"
_URL = "http://www.thespermwhale.com/jaseweston/babi/" + _TAR

_TASKS = {
    "qa0": "qa0_all-tasks",
    "qa1": "qa1_single-supporting-fact",
    "qa2": "qa2_two-supporting-facts",
    "qa3": "qa3_three-supporting-facts",
    "qa4": "qa4_two-arg-relations",
    "qa5": "qa5_three-arg-relations",
    "qa6": "qa6_yes-no-questions",
    "qa7": "qa7_counting",
    "qa8": "qa8_lists-sets",
    "qa9": "qa9_simple-negation",
    "qa10": "qa10_indefinite-knowledge",
    "qa11": "qa11_basic-coreference",
    "qa12": "qa12_conjunction",
    "qa13": "qa13_compound-coreference",
    "qa14": "qa14_time-reasoning",
    "qa15": "qa15_basic-deduction",
    "qa16": "qa16_basic-induction",
    "qa17": "qa17_positional-reasoning",
    "qa18": "qa18_size-reasoning",
    "qa19": "qa19_path-finding",
    "qa20": "qa20_agents-motivations",
}

# The names of the problems registered below (babi_qa_concat_all_tasks_1k, ...).
REGISTERED_PROBLEMS = []


def _normalize_string(raw_str):
    """`raw_str`'s tokens (T2T's tokenizer) joined by spaces: "Mary?" -> "Mary ?"."""
    return " ".join(token.strip() for token in
                    tokenizer.encode(escaping.native_to_unicode(raw_str)))


def _prepare_babi_data(tmp_dir, data_dir, url=_URL):
    """The folder holding the extracted `tasks_1-20_v1-2` (downloaded if missing)."""
    tf.io.gfile.makedirs(data_dir)
    download.maybe_download_and_extract(tmp_dir, _TAR, url, os.path.join(tmp_dir, _DIR_NAME))
    return tmp_dir


def _build_vocab(generator, vocab_dir, vocab_name):
    """The TokenTextEncoder of `vocab_dir/vocab_name`; written from `generator`'s words."""
    return ptb.build_vocab_from_words((word for line in generator for word in line.split()),
                                      vocab_dir, vocab_name)


def _all_task_raw_data(tmp_dir, subset, data_file, dataset_split):
    """Write `data_file`: every task's train (or test) file of `subset`, joined."""
    mode_name = "train" if dataset_split == spaces.DatasetSplit.TRAIN else "test"
    pattern = os.path.join(tmp_dir, _DIR_NAME, subset, "*_%s.txt" % mode_name)
    with atomic_files.atomic_write(data_file) as outfile:
        for filename in sorted(glob.glob(pattern)):
            if filename != data_file:
                with open(filename, "rb") as readfile:
                    outfile.write(readfile.read())


def _babi_parser(tmp_dir, babi_task_id, subset, dataset_split, joint_training=True):
    """The questions of the split's file: [{"story": [lines], "question": q, "answer": a}]."""
    def _data_file(mode, task_id):
        return os.path.join(tmp_dir, _DIR_NAME, subset, "%s_%s.txt" % (_TASKS[task_id], mode))

    def _parse_answer(answer):
        if joint_training or babi_task_id in ("qa8", "qa19", "qa0"):  # lists, paths
            return "".join(answer.split(","))  # as a single token!
        return answer

    if dataset_split == spaces.DatasetSplit.TRAIN:
        data_file = _data_file("train", "qa0" if joint_training else babi_task_id)
    else:
        data_file = _data_file("test", babi_task_id)
    if (babi_task_id == "qa0" or joint_training) and not os.path.exists(data_file):
        _all_task_raw_data(tmp_dir, subset, data_file, dataset_split)
    babi_instances = []
    with tf.io.gfile.GFile(data_file) as f:
        story = []
        for line in f:
            line_num, line = line.strip().split(" ", 1)
            if int(line_num) == 1:
                story = []
            if "\t" in line:
                question, answer, _ = line.split("\t")
                babi_instances.append({
                    FeatureNames.STORY: [s for s in story if s],
                    FeatureNames.QUESTION: _normalize_string(question),
                    FeatureNames.ANSWER: _parse_answer(answer)})
                story.append("")  # questions keep their line numbers, not their text
            else:
                story.append(_normalize_string(line))
    return babi_instances


class FeatureNames:
    """Feature names, i.e keys for storing babi_qa data in TFExamples."""
    STORY = "story"
    QUESTION = "question"
    ANSWER = "answer"

    @classmethod
    def features(cls):
        for attr, value in cls.__dict__.items():
            if not attr.startswith("__") and not callable(getattr(cls, attr)):
                yield value


class BabiQa(text2text.QuestionAndContext2TextProblem):
    """Base class for bAbi question answering problems (set babi_subset, babi_task_id)."""

    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    url = _URL

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self._was_reversed or self._was_copy:
            raise ValueError("%s: bAbI problems cannot be reversed or copied; drop the _rev "
                             "or _copy suffix" % type(self).__name__)

    @property
    def babi_subset(self):
        """One of "en", "en-10k", "shuffled", "shuffled-10k"."""
        raise NotImplementedError("%s must define babi_subset" % type(self).__name__)

    @property
    def babi_task_id(self):
        """One of "qa0" (all tasks together), "qa1", ... "qa20"."""
        raise NotImplementedError("%s must define babi_task_id" % type(self).__name__)

    def dataset_filename(self):
        return "babi_qa_" + self.babi_subset + "_" + _TASKS[self.babi_task_id]

    @property
    def vocab_file(self):
        return self.babi_subset + "_" + _TASKS[self.babi_task_id] + ".vocab"

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 1},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def is_generate_per_split(self):
        return True

    @property
    def joint_training(self):
        return True

    @property
    def vocab_type(self):
        return text2text.VocabType.TOKEN

    def get_labels_encoder(self, data_dir):
        """The answers' encoder: the words of the problem's vocabulary."""
        return text_encoder.TokenTextEncoder(os.path.join(data_dir, self.vocab_filename))

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        # Not a generator: the vocabulary is written before generate_encoded_samples reads it.
        tmp_dir = _prepare_babi_data(tmp_dir, data_dir, self.url)
        _build_vocab(self.generate_text_for_vocab(data_dir, tmp_dir), data_dir,
                     self.vocab_filename)
        examples = _babi_parser(tmp_dir, self.babi_task_id, self.babi_subset, dataset_split,
                                self.joint_training)

        def _generate_samples():
            for example in examples:
                context = " ".join(example[FeatureNames.STORY])
                yield {"context": " ".join(context.split()),
                       "inputs": " ".join(example[FeatureNames.QUESTION].split()),
                       "targets": example[FeatureNames.ANSWER]}

        return _generate_samples()

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        label_encoder = self.get_labels_encoder(data_dir)
        for sample in generator:
            yield {"inputs": encoder.encode(sample["inputs"]) + [text_encoder.EOS_ID],
                   "context": encoder.encode(sample["context"]) + [text_encoder.EOS_ID],
                   "targets": label_encoder.encode(sample["targets"])}

    def feature_encoders(self, data_dir):
        encoders = super().feature_encoders(data_dir)
        encoders["targets"] = self.get_labels_encoder(data_dir)  # bAbi as classification
        return encoders

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        for dataset_split in (spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL):
            for example in _babi_parser(tmp_dir, self.babi_task_id, self.babi_subset,
                                        dataset_split, self.joint_training):
                context = " ".join(example[FeatureNames.STORY])
                yield " ".join(context.split())
                yield " ".join(example[FeatureNames.QUESTION].split())
                yield example[FeatureNames.ANSWER]

    def hparams(self, defaults, unused_model_hparams):
        super().hparams(defaults, unused_model_hparams)
        p = defaults
        # T2T replaced the whole dicts, leaving inputs and context without a modality.
        p.modality["targets"] = ModalityType.CLASS_LABEL
        p.vocab_size["targets"] = self._encoders["targets"].vocab_size

    def example_reading_spec(self):
        data_fields, data_items_to_decoders = super().example_reading_spec()
        data_fields["targets"] = tf.io.FixedLenFeature([1], tf.int64)
        return data_fields, data_items_to_decoders

    def eval_metrics(self):
        return ["accuracy"]


class BabiQaConcat(BabiQa):
    """Babi with question and story concatenated together as inputs."""

    def preprocess_example(self, example, unused_mode, unused_model_hparams):
        return squad.concat_question_and_context(example, self.QUESTION_SEPARATOR_ID)

    def hparams(self, defaults, unused_model_hparams):
        super().hparams(defaults, unused_model_hparams)
        p = defaults
        p.modality.pop("context", None)
        p.vocab_size.pop("context", None)


def _problems_to_register():
    """{class name part: babi task id}: AllTasks (qa0) and Task1 ... Task20."""
    problems = {"AllTasks": "qa0"}
    problems.update(("Task%d" % i, "qa%d" % i) for i in range(1, 21))
    return problems


def _register_babi_problems():
    """Register BabiQaConcat<Task>_<1k|10k> for both subsets (babi_qa_concat_task1_1k, ...)."""
    for subset, subset_suffix in (("en", "_1k"), ("en-10k", "_10k")):
        for problem_name, babi_task_id in _problems_to_register().items():
            problem_class = type("BabiQaConcat" + problem_name + subset_suffix, (BabiQaConcat,),
                                 {"babi_task_id": babi_task_id, "babi_subset": subset,
                                  "__module__": __name__})
            registry.register_problem(problem_class)
            REGISTERED_PROBLEMS.append(problem_class.name)


_register_babi_problems()

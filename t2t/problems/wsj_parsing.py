"""Constituency parsing as translation (Vinyals et al. 2015; T2T 1.15.7's `wsj_parsing`).

    t2t-datagen --problem=wsj_parsing --data_dir=~/t2t_data --tmp_dir=~/wsj

The Penn Treebank's WSJ section is licensed (LDC), so nothing is downloaded: put into
--tmp_dir, as T2T,

    wsjTrain.trees, wsjEval.trees            one bracketed tree a line, e.g.
        (TOP (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .)))
    wsj.train.text.txt, wsj.train.tags.txt   the training sentences and their linearized
                                             trees, one a line (the vocabulary's text)

and each tree becomes `{"inputs": "John has a dog .", "targets": "S NP NNP /NP VP VBZ NP DT
NN /NP /VP . /S"}` (`words_and_tags_from_wsj_tree`: every opening bracket's label, and `/X`
for each closing phrase, without the outer TOP). The subword vocabulary,
`vocab.wsj_parsing.32768.subwords`, is built from the first 1,000 lines of each `wsj.train.*`
file. A missing file is a one-line error naming it.
"""
import itertools
import os

import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)
from t2t.problems import text_problems_tmpdir


def words_and_tags_from_wsj_tree(tree_string):
    """(words, linearized tree) of one WSJ-format tree (https://arxiv.org/abs/1412.7449).

        words_and_tags_from_wsj_tree("(TOP (S (NP (NNP John)) (VP (VBZ runs)) (. .)))")
        -> ("John runs .", "S NP NNP /NP VP VBZ /VP . /S")

    A word token must close its part-of-speech bracket ("John)"); one that does not, or
    that closes more brackets than are open, is a UserError (a ValueError) naming it.
    """
    open_labels, tags, words = [], [], []
    for token in tree_string.strip().split():
        if token.startswith("("):
            open_labels.append(token[1:])
            tags.append(token[1:])
            continue
        word = token.rstrip(")")
        closes = len(token) - len(word)
        if closes == 0 or closes > len(open_labels) or not word:
            raise errors.UserError("wsj tree: token %r must be a word closing its tag, e.g. "
                             "'dog)', in %r" % (token, tree_string.strip()[:80]))
        open_labels.pop()  # the part-of-speech tag
        tags.extend("/" + open_labels.pop() for _ in range(closes - 1))
        words.append(word)
    return " ".join(words), " ".join(tags[1:-1])  # without "TOP" and "/TOP"


def token_generator(tree_path, source_token_vocab, target_token_vocab, eos=None):
    """{"inputs": ids of the words, "targets": ids of the linearized tree} of each line of
    `tree_path`, each encoded by its vocabulary, `eos` appended when given."""
    eos_list = [] if eos is None else [eos]
    with tf.io.gfile.GFile(tree_path, mode="r") as tree_file:
        for tree_line in tree_file:
            source, target = words_and_tags_from_wsj_tree(tree_line)
            yield {"inputs": source_token_vocab.encode(source.strip()) + eos_list,
                   "targets": target_token_vocab.encode(target.strip()) + eos_list}


@registry.register_problem
class WsjParsing(text_problems_tmpdir.Text2textTmpdir):
    """Generate vocabulary and training data for parsing."""

    # These files are used for vocab generation
    TRAIN_FILES = ("wsj.train.text.txt", "wsj.train.tags.txt")

    # These files are used for generating encoded samples
    TRAIN_FILES_TREE = "wsjTrain.trees"
    EVAL_FILES_TREE = "wsjEval.trees"

    @property
    def max_samples_for_vocab(self):
        return 1000

    def _required(self, tmp_dir, name, contents):
        path = os.path.join(tmp_dir, name)
        if not tf.io.gfile.exists(path):
            raise errors.UserError("%s: %s is missing; put %s there (or pass the folder that "
                                   "holds it as --tmp_dir)" % (self.name, path, contents))
        return path

    def check_files(self, tmp_dir):
        """UserError naming the first of the four files that is missing."""
        for name in (self.TRAIN_FILES_TREE, self.EVAL_FILES_TREE):
            self._required(tmp_dir, name, "one WSJ-format tree per line")
        for name in self.TRAIN_FILES:
            self._required(tmp_dir, name, "one training sentence or linearized tree per line")

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        is_training = dataset_split == spaces.DatasetSplit.TRAIN
        tree_file = self.TRAIN_FILES_TREE if is_training else self.EVAL_FILES_TREE
        path = self._required(tmp_dir, tree_file, "one WSJ-format tree per line")
        with tf.io.gfile.GFile(path, mode="r") as trees:
            for line in trees:
                words, tags = words_and_tags_from_wsj_tree(line)
                yield {"inputs": words, "targets": tags}

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        return text2text.text2text_generate_encoded(generator, encoder,
                                                    has_inputs=self.has_inputs)

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        """Each training sentence, then its linearized tree, for max_samples_for_vocab pairs."""
        del data_dir
        inputs_file, targets_file = [self._required(tmp_dir, name, "one line per sentence")
                                     for name in self.TRAIN_FILES]
        samples = text2text.text2text_txt_iterator(inputs_file, targets_file)
        for sample in itertools.islice(samples, self.max_samples_for_vocab or None):
            yield sample["inputs"]
            yield sample["targets"]

"""Paraphrase generation from MS COCO captions (T2T 1.15.7's `paraphrase_ms_coco`).

    t2t-datagen --problem=paraphrase_generation_ms_coco_problem2d --data_dir=~/t2t_data \\
      --tmp_dir=/tmp/t2t_datagen

downloads `captions_train-val2014.zip` into --tmp_dir, extracts it into
`captions_train-val2014/` and reads `annotations/captions_{train,val}2014.json` (train, dev).
The captions of one image paraphrase each other: every pair of them, in order, is one example
`{"inputs": caption, "targets": later caption}`, and with `bidirectional` (the `2d`
problems) also the reverse pair:

    create_combination(["a", "b", "c"]) -> [("a", "b"), ("a", "c"), ("b", "c")]

Registered: `paraphrase_generation_ms_coco_problem{1d,2d}` (subwords, ~2**13,
`vocab.<problem>.8192.subwords`) and `..._problem{1d,2d}_characters` (bytes). An archive or
the extracted folder in --tmp_dir is used as it is.
"""
import collections
import json
import os

from absl import logging
import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

_MS_COCO_DOWNLOAD_URL = "http://msvocds.blob.core.windows.net/annotations-1-0-3"
_MS_COCO_ZIPPED_FILE = "captions_train-val2014.zip"
_MS_COCO_TRAIN_FILE = "captions_train2014.json"
_MS_COCO_DEV_FILE = "captions_val2014.json"


def create_combination(list_of_sentences):
    """Every pair (earlier, later) of `list_of_sentences`, in order."""
    return [(first, second) for i, first in enumerate(list_of_sentences)
            for second in list_of_sentences[i + 1:]]


class ParaphraseGenerationProblem(text2text.Text2TextProblem):
    """Paraphrase problem: `prepare_data` gives the (sentence, paraphrase) pairs."""

    @property
    def bidirectional(self):
        """If True, each pair is also an example the other way round."""
        raise NotImplementedError("%s must define bidirectional" % type(self).__name__)

    def prepare_data(self, data_dir, tmp_dir, dataset_split):
        raise NotImplementedError("%s must define prepare_data" % type(self).__name__)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for caption1, caption2 in self.prepare_data(data_dir, tmp_dir, dataset_split):
            caption_pairs = [(caption1, caption2)]
            if self.bidirectional:
                caption_pairs.append((caption2, caption1))
            for inputs, targets in caption_pairs:
                yield {"inputs": inputs, "targets": targets}


class ParaphraseGenerationMsCocoProblem(ParaphraseGenerationProblem):
    """Paraphrase problem on the MS COCO captions."""

    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    url = _MS_COCO_DOWNLOAD_URL + "/" + _MS_COCO_ZIPPED_FILE

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def approx_vocab_size(self):
        return 2 ** 13

    def prepare_data(self, data_dir, tmp_dir, dataset_split):
        captions = self._get_captions(self._maybe_download(tmp_dir, dataset_split))
        logging.info("Retrieved %d captions", len(captions))
        paraphrase_pairs = [pair for captions_for_image in captions
                            for pair in create_combination(captions_for_image)]
        logging.info("Created %d combinations pairs.", len(paraphrase_pairs))
        return paraphrase_pairs

    def _maybe_download(self, tmp_dir, dataset_split):
        """The split's captions file, the archive downloaded and extracted if missing."""
        unzip_dir = os.path.join(tmp_dir, _MS_COCO_ZIPPED_FILE[:-len(".zip")])
        if not tf.io.gfile.exists(unzip_dir):
            path = download.maybe_download(tmp_dir, _MS_COCO_ZIPPED_FILE, self.url)
            logging.info("Unzipping data to %s", unzip_dir)
            download.maybe_extract(path, unzip_dir)
        ms_coco_file = (_MS_COCO_TRAIN_FILE if dataset_split == spaces.DatasetSplit.TRAIN
                        else _MS_COCO_DEV_FILE)
        return os.path.join(unzip_dir, "annotations", ms_coco_file)

    def _get_captions(self, ms_coco_path):
        """The captions of each image (images in the file's order)."""
        with tf.io.gfile.GFile(ms_coco_path) as caption_file:
            annotations = json.load(caption_file)["annotations"]
        captions_for_image = collections.defaultdict(list)
        for annotation in annotations:
            captions_for_image[annotation["image_id"]].append(annotation["caption"])
        return list(captions_for_image.values())


@registry.register_problem
class ParaphraseGenerationMsCocoProblem2d(ParaphraseGenerationMsCocoProblem):

    @property
    def bidirectional(self):
        return True


@registry.register_problem
class ParaphraseGenerationMsCocoProblem1d(ParaphraseGenerationMsCocoProblem):

    @property
    def bidirectional(self):
        return False


@registry.register_problem
class ParaphraseGenerationMsCocoProblem2dCharacters(ParaphraseGenerationMsCocoProblem2d):

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER


@registry.register_problem
class ParaphraseGenerationMsCocoProblem1dCharacters(ParaphraseGenerationMsCocoProblem1d):

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER

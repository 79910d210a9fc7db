"""Summarizing CNN and Daily Mail news stories (T2T 1.15.7's `cnn_dailymail`).

    t2t-datagen --problem=summarize_cnn_dailymail32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads the stories of Hermann et al. (2015) from Google Drive (`cnn_stories.tgz`,
`dailymail_stories.tgz`: `cnn/stories/<sha1>.story`, `dailymail/stories/<sha1>.story`) and
See et al.'s (2017) split lists (`all_train.txt`, `all_val.txt`, `all_test.txt`: one story
URL a line) into --tmp_dir. A split's stories are those whose file name is the SHA-1 of a
URL of its list, in list order:

    hashlib.sha1(b"http://www.cnn.com/2014/...").hexdigest() + ".story"

A .story file is the article's paragraphs, then "@highlight" lines each followed by one
summary sentence. A line not ending a sentence (END_TOKENS) gets a ".". Each story is one
example `{"inputs": article, "targets": highlights}`, the paragraphs and highlights each
joined by spaces; stories without text or highlights are skipped. The split's texts are
also written to --tmp_dir as `cnndm.{train,dev,test}.{source,target}` (one story a line),
for ROUGE scoring. Extracted `cnn/stories` and `dailymail/stories` folders in --tmp_dir
are used as they are.

| problem                                              | vocabulary                          |
|------------------------------------------------------|-------------------------------------|
| summarize_cnn_dailymail32k                           | its own ~2**15 subwords             |
| summarize_cnn_dailymail_wiki_lm_shared_vocab(64k)    | languagemodel_en_wiki32k's (64k's)  |
| summarize_cnn_dailymail_wiki_lm_multi_vocab64k       | languagemodel_de_en_fr_ro_wiki64k's |
| summarize_cnn_dailymail_multi64k_packed1k            | that one, prefixed, in 1024-long packs |
| summarize_frac{,0p1,1,2,5,10,20,50}_cnn_dailymail_wiki_lm_shared_vocab64k | 64k wiki's; a shuffled 100%, 0.1%, 1%, ... 50% of the training stories |
"""
import hashlib
import os
import random

from absl import logging
import tensorflow as tf

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import escaping
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)
from t2t.problems import wiki_lm

# Links to data from http://cs.nyu.edu/~kcho/DMQA/
_CNN_STORIES_DRIVE_URL = ("https://drive.google.com/uc?"
                          "export=download&id=0BwmD_VLjROrfTHk4NFg2SndKcjQ")
_DAILYMAIL_STORIES_DRIVE_URL = ("https://drive.google.com/uc?export=download&id"
                                "=0BwmD_VLjROrfM1BxdkxVaTY2bWs")
# Train/Dev/Test splits for summarization data (See et al., 2017).
_TRAIN_URLS = ("https://raw.githubusercontent.com/abisee/cnn-dailymail/"
               "master/url_lists/all_train.txt")
_DEV_URLS = ("https://raw.githubusercontent.com/abisee/cnn-dailymail/"
             "master/url_lists/all_val.txt")
_TEST_URLS = ("https://raw.githubusercontent.com/abisee/cnn-dailymail/"
              "master/url_lists/all_test.txt")

# End-of-sentence marker.
EOS = text_encoder.EOS_ID

# Techniques for data prep from See et al. (2017)
dm_single_close_quote = "\u2019"
dm_double_close_quote = "\u201d"
# Acceptable ways to end a sentence.
END_TOKENS = [".", "!", "?", "...", "'", "`", "\"", dm_single_close_quote,
              dm_double_close_quote, ")"]

# Where each file comes from; a problem's `urls` may point elsewhere (tests: a local server).
URLS = {"cnn": _CNN_STORIES_DRIVE_URL, "dailymail": _DAILYMAIL_STORIES_DRIVE_URL,
        spaces.DatasetSplit.TRAIN: _TRAIN_URLS, spaces.DatasetSplit.EVAL: _DEV_URLS,
        spaces.DatasetSplit.TEST: _TEST_URLS}
_SPLIT_FILES = {spaces.DatasetSplit.TRAIN: ("all_train.txt", "cnndm.train"),
                spaces.DatasetSplit.EVAL: ("all_val.txt", "cnndm.dev"),
                spaces.DatasetSplit.TEST: ("all_test.txt", "cnndm.test")}


def _maybe_download_corpora(tmp_dir, dataset_split, urls=None):
    """(every .story file, the split's URL list file), downloading what is missing."""
    urls = urls or URLS
    all_files = []
    for corpus in ("cnn", "dailymail"):
        final_path = os.path.join(tmp_dir, corpus, "stories")
        if not tf.io.gfile.exists(final_path):
            archive = download.maybe_download_from_drive(
                tmp_dir, corpus + "_stories.tgz", urls[corpus])
            download.maybe_extract(archive, tmp_dir)
        all_files += sorted(tf.io.gfile.glob(os.path.join(final_path, "*")))
    list_name = _SPLIT_FILES[dataset_split][0]
    urls_path = download.maybe_download(tmp_dir, list_name, urls[dataset_split])
    return all_files, urls_path


def example_splits(url_file, all_files):
    """The story files of the URLs in `url_file` (a file is named by its URL's SHA-1)."""
    all_files_map = {f.split("/")[-1]: f for f in all_files}
    with tf.io.gfile.GFile(url_file) as lines:
        urls = [line.strip().encode("utf-8") for line in lines]
    filelist = []
    for url in urls:
        filename = hashlib.sha1(url).hexdigest() + ".story"
        if filename not in all_files_map:
            logging.info("Missing file: %s", url)
            continue
        filelist.append(all_files_map[filename])
    logging.info("Found %d examples", len(filelist))
    return filelist


def fix_run_on_sents(line):
    """`line` with a "." added unless it ends a sentence (or is empty, or a @highlight)."""
    if "@highlight" in line or not line or line[-1] in END_TOKENS:
        return line
    return line + "."


def _read_story(story_file):
    """(article paragraphs, highlights) of one .story file."""
    story, summary = [], []
    reading_highlights = False
    with tf.io.gfile.GFile(story_file, "rb") as lines:
        for line in lines:
            line = fix_run_on_sents(escaping.to_unicode_utf8(line.strip()))
            if not line:
                continue
            if line.startswith("@highlight"):
                if not story:
                    break  # No article text.
                reading_highlights = True
            elif reading_highlights:
                summary.append(line)
            else:
                story.append(line)
    return story, summary


def example_generator(all_files, urls_path, sum_token):
    """Each story of the split as one text: article, " <summary> " (or " "), highlights."""
    story_summary_split_token = " <summary> " if sum_token else " "
    for story_file in example_splits(urls_path, all_files):
        story, summary = _read_story(story_file)
        if story and summary:
            yield " ".join(story) + story_summary_split_token + " ".join(summary)


def _story_summary_split(story):
    story_text, _, summary = story.partition(" <summary> ")
    return story_text, summary


def write_raw_text_to_files(all_files, urls_path, dataset_split, tmp_dir):
    """Write the split's articles and highlights to tmp_dir/cnndm.<split>.{source,target}."""
    filename = _SPLIT_FILES[dataset_split][1]
    logging.info("Writing %s", filename)
    base = os.path.join(tmp_dir, filename)
    with atomic_files.atomic_write(base + ".source", "w") as fstory, \
            atomic_files.atomic_write(base + ".target", "w") as fsummary:
        for example in example_generator(all_files, urls_path, sum_token=True):
            story, summary = _story_summary_split(example)
            fstory.write(story + "\n")
            fsummary.write(summary + "\n")


@registry.register_problem
class SummarizeCnnDailymail32k(text2text.Text2TextProblem):
    """Summarize CNN and Daily Mail articles to their summary highlights."""

    urls = URLS

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        del data_dir
        all_files, urls_path = _maybe_download_corpora(tmp_dir, spaces.DatasetSplit.TRAIN,
                                                       self.urls)
        return example_generator(all_files, urls_path, sum_token=False)

    @property
    def dataset_splits(self):
        """Splits of data to produce and number of output shards for each."""
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 100},
                {"split": spaces.DatasetSplit.EVAL, "shards": 10},
                {"split": spaces.DatasetSplit.TEST, "shards": 10}]

    @property
    def is_generate_per_split(self):
        # T2T made this a method, which `if` took as True; the same value, as a property.
        return True

    def _stories(self, tmp_dir, dataset_split):
        """(article, highlights) of the split's stories (its raw text files written)."""
        all_files, urls_path = _maybe_download_corpora(tmp_dir, dataset_split, self.urls)
        write_raw_text_to_files(all_files, urls_path, dataset_split, tmp_dir)
        for example in example_generator(all_files, urls_path, sum_token=True):
            yield _story_summary_split(example)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        for story, summary in self._stories(tmp_dir, dataset_split):
            yield {"inputs": story, "targets": summary}


@registry.register_problem
class SummarizeCnnDailymailWikiLMSharedVocab(SummarizeCnnDailymail32k):
    """Summarize CNN and Daily Mail articles using the Wiki 32k vocab."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelEnWiki32k()


@registry.register_problem
class SummarizeCnnDailymailWikiLMSharedVocab64k(SummarizeCnnDailymail32k):
    """Summarize CNN and Daily Mail articles using the Wiki 64k vocab."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelEnWiki64k()


@registry.register_problem
class SummarizeCnnDailymailWikiLMMultiVocab64k(SummarizeCnnDailymail32k):
    """Summarize CNN and Daily Mail articles using multi-lingual 64k vocab."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@registry.register_problem
class SummarizeCnnDailymailMulti64kPacked1k(SummarizeCnnDailymailWikiLMMultiVocab64k):
    """Summarize CNN and Daily Mail articles using multi-lingual 64k vocab, packed."""

    @property
    def packed_length(self):
        return 1024

    @property
    def num_training_examples(self):
        return 252600

    @property
    def inputs_prefix(self):
        return "CNN Daily Mail article to summary "

    @property
    def targets_prefix(self):
        return "CNN Daily Mail summary to article "


@registry.register_problem
class SummarizeFracCnnDailymailWikiLMSharedVocab64k(SummarizeCnnDailymailWikiLMSharedVocab64k):
    """Summarize a fraction of CNN/DM articles using the Wiki 64k vocab.

    The training stories are shuffled with Python's `random` (t2t-datagen seeds it from
    --random_seed) and the first `fraction_of_data()` of them kept; dev and test are whole.
    """

    def fraction_of_data(self):
        return 1.

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        all_data = list(self._stories(tmp_dir, dataset_split))
        if dataset_split == spaces.DatasetSplit.TRAIN:
            random.shuffle(all_data)
            all_data = all_data[:int(self.fraction_of_data() * len(all_data))]
        for story, summary in all_data:
            yield {"inputs": story, "targets": summary}


def _register_fraction(class_name, fraction):
    """Register SummarizeFrac<...>CnnDailymailWikiLMSharedVocab64k keeping `fraction`."""
    cls = type(class_name, (SummarizeFracCnnDailymailWikiLMSharedVocab64k,), {
        "fraction_of_data": lambda self: fraction,
        "__doc__": "The first %g%% of the shuffled training stories." % (100 * fraction),
        "__module__": __name__})
    return registry.register_problem(cls)


# T2T's names: Frac0p1 keeps 0.1% of the stories, Frac1 1%, ... Frac50 50%.
for _name, _fraction in (("0p1", 0.001), ("1", 0.01), ("2", 0.02), ("5", 0.05), ("10", 0.1),
                         ("20", 0.2), ("50", 0.5)):
    _class_name = "SummarizeFrac%sCnnDailymailWikiLMSharedVocab64k" % _name
    globals()[_class_name] = _register_fraction(_class_name, _fraction)

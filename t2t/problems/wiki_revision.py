"""Older fragment -> newer fragment of Wikipedia revisions, for grammatical error correction
(T2T 1.15.7's `wiki_revision`; Lichtarge et al. 2018, https://arxiv.org/abs/1811.01710).

    t2t-datagen --problem=wiki_revision --data_dir=~/t2t_data --tmp_dir=~/wiki_history

Nothing is downloaded: the history dumps (https://dumps.wikimedia.org/enwiki/latest/,
`enwiki-latest-pages-meta-history*.xml-p*.7z` or `.bz2`) are the files whose path starts with
`data_prefix` (T2T's --wiki_revision_data_prefix; by default
`<tmp_dir>/enwiki-latest-pages-meta-history`), each copied into tmp_dir first. File i of the
sorted list feeds shard i % (train + dev shards); each of the 50 training shards and the dev
shard is one task (`--task_id`), or every task in turn.

Of each article's revisions (logarithmically many: `include_revision`, and the last), every
consecutive pair is encoded, aligned (`fast_match_sequences`) and cut at random points of
the equal stretches into examples such as

    {"inputs": ids of "Teh cat sat on the mat", "targets": ids of "The cat sat on the mat"}

with spelling-type errors and "|?|" infill markers added to the inputs, examples longer
than `max_segment_length` (with EOS) dropped, and identical pairs kept for about
`percent_identical_examples` of the examples. The subword vocabulary
`vocab.wiki_revision.strip.32768` is built from the newest revisions of the first pages (or
`vocab_file` is used, and copied there). Each shard gets a `stats_<shard name>` text file.

T2T's --wiki_revision_* flags are the properties below (library code reads no flags):
subclass and override them, e.g.

    @registry.register_problem
    class MyWikiRevision(wiki_revision.WikiRevision):
        num_train_shards = 4
        data_prefix = "/dumps/enwiki-latest-pages-meta-history1"
"""
import logging
import math
import os
import random

import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.evaluation import metrics
from t2t.problems import text2text
from t2t.problems import wiki_revision_utils

_STATS = ("num_identity_examples", "num_total_examples", "num_pages", "num_revisions_total",
          "num_revisions_admitted", "num_examples_thrown_out_identity",
          "num_examples_thrown_out_too_long", "num_examples_thrown_out_edit_distance",
          "num_examples_with_introduced_error", "num_introduced_errors",
          "num_source_tokens", "num_target_tokens")


def _ratio(numerator, denominator):
    return numerator / denominator if denominator else 0


@registry.register_problem
class WikiRevision(text2text.Text2TextProblem):
    """Old segment -> revised segment; vocab size 32k, at most 256 ids a side."""

    # T2T's --wiki_revision_* flags and their defaults.
    num_train_shards = 50
    num_dev_shards = 1
    data_prefix = None  # None: <tmp_dir>/enwiki-latest-pages-meta-history
    vocab_file = ""  # "": built from the data
    max_examples_per_shard = 0  # 0: no cap
    max_page_size_exp = 26  # pages of 2**26 bytes or more are skipped
    max_equal_to_diff_ratio = 0  # 0: no edit-distance filter
    wiki_revision_skip_factor = 1.5  # T2T's --wiki_revision_revision_skip_factor
    percent_identical_examples = 0.04
    introduce_errors = True

    corpus_files = None

    def __init__(self, was_reversed=False, was_copy=False):
        super().__init__(was_reversed, was_copy)
        self._reset_stats()

    def _reset_stats(self):
        for name in _STATS:
            setattr(self, name, 0)

    @property
    def approx_vocab_size(self):
        return 2**15  # 32K

    @property
    def strip(self):
        """Whether to strip wikipedia-stuff to get plain text."""
        return True

    @property
    def max_segment_length(self):
        """Maximum number of input/target wordpiece tokens."""
        return 256

    @property
    def vocab_filename(self):
        # The file generate_data writes (T2T looked for vocab.wiki_revision.32768.subwords).
        return wiki_revision_utils.vocab_filename(self.approx_vocab_size, self.strip)

    def corpus_prefix(self, tmp_dir):
        """`data_prefix`, or tmp_dir/enwiki-latest-pages-meta-history."""
        return self.data_prefix or os.path.join(tmp_dir, "enwiki-latest-pages-meta-history")

    def aggregate_job_stats(self):
        """This shard's settings and counts, as T2T's stats file."""
        n_files = len(self.corpus_files or [])
        thrown = (self.num_examples_thrown_out_too_long + self.num_examples_thrown_out_identity
                  + self.num_examples_thrown_out_edit_distance)
        tokens = self.num_source_tokens + self.num_target_tokens
        total = self.num_total_examples
        return "\n".join([
            "Flags for job:\nDev shards: {}\nTrain shards: {}\nRevision skip factor: {}\n"
            "Max page size: 2**{}\nIntroduce errors: {}\nMax edit ratio: {}\n"
            "Percent Identical Examples: {}\n".format(
                self.num_dev_shards, self.num_train_shards, self.wiki_revision_skip_factor,
                self.max_page_size_exp, self.introduce_errors, self.max_equal_to_diff_ratio,
                self.percent_identical_examples),
            "corpus files: {}\n\tnames: {}\n\tpages per input file: {:.1f}\n".format(
                n_files, self.corpus_files, _ratio(self.num_pages, n_files)),
            "pages processed: {}\n\trevisions per page: {:.2f}, total: {}\n"
            "\trevisions admitted per page: {:.2f}, percent of total: {:.2f}\n".format(
                self.num_pages, _ratio(self.num_revisions_total, self.num_pages),
                self.num_revisions_total, _ratio(self.num_revisions_admitted, self.num_pages),
                100 * _ratio(self.num_revisions_admitted, self.num_revisions_total)),
            "revisions admitted: {}\n\texamples generated per revision: {:.2f}\n".format(
                self.num_revisions_admitted, _ratio(total, self.num_revisions_admitted)),
            "examples generated: {}\n\twith error introduced: {}, percent of total: {:.2f}\n"
            "\ttotal errors introduced: {}, errors per errorred example: {:.2f}\n"
            "\texamples thrown out: {}\n\t\ttoo long: {}\n\t\tidentity: {}\n"
            "\t\tedit distance: {}\n\tremaining identity examples: {}\n"
            "\tratio identity (actual, desired): {:.3f}, {}\n".format(
                total, self.num_examples_with_introduced_error,
                100 * _ratio(self.num_examples_with_introduced_error, total),
                self.num_introduced_errors,
                _ratio(self.num_introduced_errors, self.num_examples_with_introduced_error),
                thrown, self.num_examples_thrown_out_too_long,
                self.num_examples_thrown_out_identity,
                self.num_examples_thrown_out_edit_distance, self.num_identity_examples,
                _ratio(self.num_identity_examples, total), self.percent_identical_examples),
            "tokens generated: {}\n\tsource: {}\n\ttarget: {}\n\tper example: {:.2f}\n"
            "\t\tsource: {:.2f}\n\t\ttarget: {:.2f}\n".format(
                tokens, self.num_source_tokens, self.num_target_tokens, _ratio(tokens, total),
                _ratio(self.num_source_tokens, total), _ratio(self.num_target_tokens, total)),
        ])

    def _encoder(self, data_dir, tmp_dir):
        if self.vocab_file:
            encoder = wiki_revision_utils.get_encoder_from_vocab(self.vocab_file)
            # Copied beside the data, where feature_encoders looks (T2T only said it would).
            target = os.path.join(data_dir, self.vocab_filename)
            if not tf.io.gfile.exists(target):
                tf.io.gfile.makedirs(data_dir)
                encoder.store_to_file(target)
            return encoder
        return wiki_revision_utils.get_or_generate_vocabulary(
            data_dir, tmp_dir, self.corpus_prefix(tmp_dir), self.max_page_size_exp,
            self.approx_vocab_size, self.strip)

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        """Write shard `task_id` (train shards first, then dev); every shard when -1."""
        num_shards = self.num_train_shards + self.num_dev_shards
        if task_id is None or task_id < 0:
            # T2T returned after the first shard here.
            for shard in range(num_shards):
                self.generate_data(data_dir, tmp_dir, shard)
            return
        prefix = self.corpus_prefix(tmp_dir)
        if not wiki_revision_utils.all_corpus_files(prefix):
            raise errors.UserError(
                "%s: no history dump matches %s*; put the enwiki-latest-pages-meta-history"
                "*.7z (or .bz2) files there or set data_prefix" % (self.name, prefix))
        self.corpus_files = wiki_revision_utils.corpus_files_for_shard(
            task_id, self.num_train_shards, self.num_dev_shards, prefix)
        encoder = self._encoder(data_dir, tmp_dir)
        if task_id < self.num_train_shards:
            out_file = self.training_filepaths(
                data_dir, self.num_train_shards, shuffled=False)[task_id]
        else:
            out_file = self.dev_filepaths(
                data_dir, self.num_dev_shards, shuffled=False)[task_id - self.num_train_shards]
        logging.info("Generating files for path: %s", out_file)
        self._reset_stats()  # Per shard (T2T's counters ran on across shards).
        rng = random.Random(123)  # T2T: random.seed(123) for every shard.
        examples = self.generator(encoder, self.corpus_files, tmp_dir, rng=rng)
        generator_utils.generate_files(self._maybe_pack_examples(examples), [out_file])
        generator_utils.shuffle_dataset([out_file], random_seed=123)

        stats = self.aggregate_job_stats()
        out_dir, filename = os.path.split(out_file.replace("-unshuffled", ""))
        stats_file_path = os.path.join(out_dir, "stats_" + filename)
        if tf.io.gfile.exists(stats_file_path) and tf.io.gfile.stat(stats_file_path).length:
            logging.info("Skipping writing stats because output file exists.")
        else:
            with tf.io.gfile.GFile(stats_file_path, "w") as out:
                out.write(stats)
        logging.info(stats)

    def generator(self, encoder, corpus_files, tmp_dir, rng=None):
        """The examples of each page of `corpus_files`, up to max_examples_per_shard."""
        rng = rng or random
        for page in wiki_revision_utils.corpus_page_generator(
                corpus_files, tmp_dir, self.max_page_size_exp):
            self.num_pages += 1
            yield from self.page_to_examples(page, encoder, rng=rng)
            if (self.max_examples_per_shard
                    and self.num_total_examples >= self.max_examples_per_shard):
                logging.info("Examples per shard %d >= max_examples_per_shard %d. Stopping.",
                             self.num_total_examples, self.max_examples_per_shard)
                break
        logging.info("Total pages: %d, total examples: %d", self.num_pages,
                     self.num_total_examples)

    def page_to_examples(self, page, encoder, rng=None):
        """The examples of each consecutive pair of a page's admitted revisions."""
        rng = rng or random
        revisions = page["revisions"]
        self.num_revisions_total += len(revisions)
        if len(revisions) < 2:
            return []
        texts = [wiki_revision_utils.get_text(revision, strip=self.strip)
                 for n, revision in enumerate(revisions)
                 if wiki_revision_utils.include_revision(n, self.wiki_revision_skip_factor)
                 or n + 1 == len(revisions)]
        self.num_revisions_admitted += len(texts)
        examples = []
        for old_text, new_text in zip(texts, texts[1:]):
            if self.introduce_errors:
                old_text, num_added = wiki_revision_utils.introduce_errors(old_text, rng=rng)
                if num_added:
                    self.num_introduced_errors += num_added
                    self.num_examples_with_introduced_error += 1
            if encoder:
                old, new = encoder.encode(old_text), encoder.encode(new_text)
            else:  # Characters, without an encoder.
                old, new = old_text, new_text
            examples.extend(self.make_examples(
                encoder, old, new, max_length=self.max_segment_length,
                percent_identical_examples=self.percent_identical_examples, rng=rng))
        return examples

    def make_examples(self, encoder, old_snapshot, new_snapshot, max_length=1024,
                      percent_identical_examples=0.01, max_length_distance=0, rng=None):
        """[{"inputs": old segment + [EOS], "targets": new segment + [EOS]}, ...] of two
        snapshots (id lists), cut at random points (a per-token probability drawn
        log-uniformly from [2 / max_length, 1/4]) of their equal stretches.

        Pairs with an empty side, longer than max_length, or (with max_length_distance)
        differing in length by more are dropped; identical pairs are kept only while they
        are at most percent_identical_examples of the examples, and then half the time.
        """
        del encoder
        rng = rng or random
        eos = [text_encoder.EOS_ID]
        bound1, bound2 = -math.log(4.0), -math.log(max_length / 2.0)
        cut_prob = math.exp(rng.random() * (bound2 - bound1) + bound1)
        cut_points = [(0, 0)]
        for tag, i1, i2, j1, _ in wiki_revision_utils.fast_match_sequences(
                old_snapshot, new_snapshot):
            if tag == "equal":
                for i in range(i1, i2 + 1):
                    if rng.random() < cut_prob:
                        cut_points.append((i, i + j1 - i1))
        cut_points.append((len(old_snapshot), len(new_snapshot)))
        pairs = [(old_snapshot[i1:i2], new_snapshot[j1:j2])
                 for (i1, j1), (i2, j2) in zip(cut_points, cut_points[1:])]
        pairs, thrown = wiki_revision_utils.edit_distance_filter(
            wiki_revision_utils.throw_empty_pairs(pairs), self.max_equal_to_diff_ratio)
        self.num_examples_thrown_out_edit_distance += thrown

        examples = []
        for source, target in pairs:
            old_segment, new_segment = list(source) + eos, list(target) + eos
            if len(old_segment) > max_length or len(new_segment) > max_length:
                self.num_examples_thrown_out_too_long += 1
                continue
            if max_length_distance and (abs(len(old_segment) - len(new_segment))
                                        > max_length_distance):
                self.num_examples_thrown_out_edit_distance += 1
                continue
            if old_segment == new_segment:
                if (self.num_identity_examples / (1 + self.num_total_examples)
                        > percent_identical_examples) or rng.random() > 0.5:
                    self.num_examples_thrown_out_identity += 1
                    continue
                self.num_identity_examples += 1
            self.num_total_examples += 1
            self.num_source_tokens += len(old_segment) - 1
            self.num_target_tokens += len(new_segment) - 1
            examples.append({"inputs": old_segment, "targets": new_segment})
        return examples

    def eval_metrics(self):
        return [metrics.Metrics.ACC, metrics.Metrics.ACC_TOP5, metrics.Metrics.ACC_PER_SEQ,
                metrics.Metrics.NEG_LOG_PERPLEXITY]

    @property
    def invert_prob(self):
        """Ratio of e^2 positive forward to backward examples."""
        return 1.0 / (1.0 + math.exp(2.0))


@registry.register_problem
class WikiRevisionPacked1k(WikiRevision):
    """Packed version for TPU."""

    @property
    def packed_length(self):
        return 1024


@registry.register_problem
class WikiRevisionPacked256(WikiRevision):
    """Packed version for TPU."""

    @property
    def packed_length(self):
        return 256

    @property
    def max_segment_length(self):
        return 256

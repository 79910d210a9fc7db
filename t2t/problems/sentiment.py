"""What T2T's binary sentiment problems (`sentiment_imdb`, `sentiment_sst_binary`) share.

    class SentimentFoo(sentiment.BinarySentimentProblem):   # neg (0) / pos (1),
        def generate_samples(self, data_dir, tmp_dir, dataset_split):  # 10 train shards, 1 dev
            yield {"inputs": "a fine film", "label": 1}

    class SentimentFooCharacters(sentiment.CharacterSentimentMixin, SentimentFoo): ...
"""
from t2t.problems import spaces
from t2t.problems import text2text


class BinarySentimentProblem(text2text.Text2ClassProblem):
    """Text -> neg (0) / pos (1); per split, 10 training shards and 1 dev shard (T2T's)."""

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def num_classes(self):
        return 2

    def class_labels(self, data_dir):
        del data_dir
        return ["neg", "pos"]


class CharacterSentimentMixin(text2text.CharactersMixin):
    """The character-level variant: bytes instead of subwords, T2T's EN_CHR_SENT task id."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_CHR_SENT

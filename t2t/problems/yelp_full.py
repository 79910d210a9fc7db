"""Yelp review star classification, 1 to 5 stars (T2T 1.15.7's `yelp_full`).

    t2t-datagen --problem=sentiment_yelp_full --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads fast.ai's `yelp_review_full_csv.tgz` (Zhang et al. 2015; 650,000 training and
50,000 test reviews) into --tmp_dir and extracts `yelp_review_full_csv/{train,test}.csv`,
one `"<1..5>","<review>"` row each. Each row is one example
`{"inputs": ids of the review + [EOS], "targets": [stars - 1]}`; `class_labels` is
["1", ..., "5"]. test.csv is the dev split. The vocabulary is
`vocab.sentiment_yelp_full.8192.subwords`. The archive or the extracted folder in --tmp_dir
is used as it is. The reading is shared with `yelp_polarity` (`sentiment.YelpReviewProblem`).
"""
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import sentiment
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)


@registry.register_problem
class SentimentYelpFull(sentiment.YelpReviewProblem):
    """Yelp dataset: review -> "1".."5" stars (ids 0..4)."""
    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    URL = "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_full_csv.tgz"
    NUM_STARS = 5


@registry.register_problem
class SentimentYelpFullCharacters(sentiment.CharacterSentimentMixin, SentimentYelpFull):
    """Yelp dataset, character level."""

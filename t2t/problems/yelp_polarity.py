"""Yelp review polarity classification (T2T 1.15.7's `yelp_polarity`).

    t2t-datagen --problem=sentiment_yelp_polarity --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads fast.ai's `yelp_review_polarity_csv.tgz` (Zhang et al. 2015; 560,000 training and
38,000 test reviews) into --tmp_dir and extracts `yelp_review_polarity_csv/{train,test}.csv`,
one `"<1|2>","<review>"` row each (1: negative, 2: positive). Each row is one example
`{"inputs": ids of the review + [EOS], "targets": [stars - 1]}`; `class_labels` is
["1", "2"]. test.csv is the dev split. The vocabulary is
`vocab.sentiment_yelp_polarity.8192.subwords`. The archive or the extracted folder in
--tmp_dir is used as it is.
"""
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import sentiment
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)


@registry.register_problem
class SentimentYelpPolarity(sentiment.YelpReviewProblem):
    """Yelp dataset: review -> "1" (negative, id 0) / "2" (positive, id 1)."""
    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    URL = "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_polarity_csv.tgz"
    NUM_STARS = 2


@registry.register_problem
class SentimentYelpPolarityCharacters(sentiment.CharacterSentimentMixin, SentimentYelpPolarity):
    """Yelp dataset, character level."""

"""SeqIO's data API in t2t: `from t2t import seqio` works where `import seqio` (0.0.20) did.

Tasks (a source, preprocessors, output features), Mixtures of tasks by rate, vocabularies,
preprocessors and feature converters with seqio's names, signatures, defaults, feature
names and cache file format, on t2t's stack (no jax, jaxlib, clu or pyglove):

    from t2t import seqio

    vocab = seqio.SentencePieceVocabulary("spm.model")
    seqio.TaskRegistry.add(
        "qa", seqio.TextLineDataSource({"train": "train.tsv"}),
        preprocessors=[parse_tsv, seqio.preprocessors.tokenize, seqio.preprocessors.append_eos],
        output_features={"inputs": seqio.Feature(vocab), "targets": seqio.Feature(vocab)})
    ds = seqio.get_dataset("qa", {"inputs": 64, "targets": 16},
                           seqio.EncDecFeatureConverter(pack=True), batch_size=8, seed=1)

t2t additions: `T2TVocabulary` (any t2t text encoder or T2T vocab file) and
`add_t2t_problem_task` (a registered T2T Problem's generated data as a Task), so T2T
datasets and SeqIO tasks mix in one Mixture; fast packing without custom ops. The package
needs only t2t's `core`, `data` and `encoders`: `add_t2t_problem_task` and
`t2t_problem_source` live in `t2t.seqio_training.problem_tasks` (they need t2t's Problems)
and are loaded from there the first time they are used as `seqio.<name>`.
Evaluation: `Evaluator` (each task of a mixture on its own; `metric_fns` with
`(targets, predictions)` / `(targets, scores)` and metric objects, `metric_objs`), loggers
(`TensorBoardLogger`, `JSONLogger`, ...) and `metrics` (value classes, `Metric`,
`LegacyMetric`, `PassthroughLegacyMetric`, ... in numpy). Not here yet: `experimental`, `helpers`,
`PyGloveTunableMixture`. seqio's Beam cache writer (`seqio_cache_tasks`) is `t2t-cache-tasks`
(`t2t.seqio.beam_utils`, `t2t.seqio.cache_tasks`; `pip install 't2t-toolkit[beam]'`).
"""
import importlib
from typing import Any, Callable, Mapping, Union

from t2t.seqio import dataset_providers
from t2t.seqio.dataset_providers import (
    SHUFFLE_BUFFER_SIZE, CacheDatasetPlaceholder, ContinuousFeature, Feature, Mixture,
    MixtureRate, MixtureRegistry, SampleFn, SourceInfo, Task, TaskRegistry, get_dataset,
    get_mixture_or_task, get_subtasks, maybe_get_mixture_or_task)
from t2t.seqio import evaluation
from t2t.seqio.evaluation import Evaluator
from t2t.seqio import feature_converters
from t2t.seqio.feature_converters import (
    DecoderFeatureConverter, EncDecFeatureConverter, EncoderFeatureConverter, FeatureConverter,
    GrainFeatureConverter, LMFeatureConverter, PassThroughFeatureConverter,
    PrefixLMFeatureConverter, PrefixSuffixLMFeatureConverter, PrePackedEncDecFeatureConverter,
    PrePackedLMFeatureConverter, PrePackedPrefixLMFeatureConverter, autoregressive_inputs,
    non_padding_position)
from t2t.seqio import loggers
from t2t.seqio.loggers import (
    JSONLogger, Logger, PyLoggingLogger, TensorAndNumpyEncoder, TensorBoardLogger,
    TensorBoardLoggerV1, skip_none_value_dict_factory)
from t2t.seqio import metrics
from t2t.seqio import preprocessors
from t2t.seqio.t2t_vocabulary import T2TVocabulary
from t2t.seqio import test_utils
from t2t.seqio import utils
from t2t.seqio.packing import trim_and_pack_dataset
from t2t.seqio.provider_registry import DatasetProviderRegistry
from t2t.seqio.sources import (
    DataSource, DatasetProviderBase, FileDataSource, FunctionDataSource, ProtoDataSource,
    ShardInfo, TextLineDataSource, TfdsDataSource, TFExampleDataSource)
from t2t.seqio.tfds_loader import (
    LazyTfdsLoader, TfdsSplit, set_tfds_data_dir_override, set_tfds_read_config_override)
from t2t.seqio.utils import (
    NestedTFDict, TFDict, add_global_cache_dirs, add_kwargs_to_transform, dict_to_tfexample,
    flatten_dict, fully_qualified_class_name, function_name, get_cached_info_path,
    get_cached_stats_path, get_cached_tfrecord_prefix, get_global_cache_dirs,
    get_task_dir_from_name, list_files, make_autoregressive_inputs, map_over_dataset,
    map_seed_manager, mixing_rate_num_characters, mixing_rate_num_examples,
    set_global_cache_dirs, set_preprocessor_seed, stateless_shuffle,
    tfexample_ragged_length_key, tfexample_sparse_indices_key, tfexample_to_dict,
    trim_and_pad_dataset, trim_dataset, unflatten_dict)
from t2t.seqio import vocabularies
from t2t.seqio.vocabularies import (
    PAD_ID, BertWordPieceVocabulary, ByteVocabulary, FullCodepointVocabulary,
    PartialCodepointVocabulary, PassThroughVocabulary, SentencePieceVocabulary,
    UnigramVocabulary, Vocabulary)

# seqio's type aliases.
DataSourceInterface = DataSource
DatasetFnCallable = Callable[..., Any]
DatasetReaderType = dataset_providers.DatasetReaderType
DecodeFnType = Callable[..., Mapping[str, Any]]
MetricFnCallable = Callable[..., Mapping[str, Any]]
SubtaskOrName = Union[Task, Mixture, str]

__version__ = "0.0.20"

# t2t's T2T-Problem bridge needs t2t's Problems, which importing this package must not load;
# its names stay reachable here and are imported on first use.
_LAZY_NAMES = {"add_t2t_problem_task": "t2t.seqio_training.problem_tasks",
               "t2t_problem_source": "t2t.seqio_training.problem_tasks"}


def __getattr__(name):
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    return sorted(set(globals()) | set(_LAZY_NAMES))

"""A T2TModel's train and eval steps as `tf.function`s, with Estimator's variable names.

    functions = NativeModelFunctions("transformer", hparams)     # hparams.problem attached
    functions.build(replica_dataset.element_spec, train_dataset.element_spec,
                    eval_dataset.element_spec)
    sorted(functions.variables)[:2]   # ["global_step", "transformer/body/decoder/..."]
    loss, tokens, examples, learning_rate, step = functions.train_step(next(train_iterator))
    functions.save("/run/model.ckpt", step=100)      # /run/model.ckpt-100.{index,data-*}
    metrics = functions.evaluate(eval_dataset, steps=10)
    # {"loss": 1.02, "metrics-<problem>/targets/accuracy": 0.61, ...}

Variables are created once, by tracing (`build`): the model's through a name -> variable
store (`t2t.model.variable_store`), the global step through the same store, and the
optimizer's slots ("<variable>/Adam", "<variable>/Adam_1", "beta1_power", ...) by the v1
optimizer itself while the train step is traced. Under a `tf.distribute` strategy
everything is created in `strategy.scope()` outside `strategy.run` (creating variables
inside a replica function fails), then each step runs the replicas with `strategy.run`;
the v1 optimizer scales the loss by 1/replicas and sums the gradients, as under an
Estimator with a MirroredStrategy.
"""
import math

import tensorflow as tf
from absl import logging

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers import common_layers
from t2t.model import model_hparams
from t2t.model import model_specs
from t2t.model import variable_store
from t2t.optim import learning_rate as learning_rate_lib
from t2t.training import train_log

_v1 = tf.compat.v1
GLOBAL_STEP = "global_step"


def relaxed_spec(element_spec):
    """The element spec with every dimension but the rank unknown (one trace fits all
    batches: length buckets change the batch and length dimensions)."""
    return tf.nest.map_structure(
        lambda spec: tf.TensorSpec([None] * spec.shape.rank, spec.dtype, spec.name)
        if isinstance(spec, tf.TensorSpec) and spec.shape.rank is not None else spec,
        element_spec)


def features_of(element):
    """The features dict of a dataset element: input_fns give (features, labels) pairs
    whose labels are features["targets"]; a dict is taken as it is."""
    if isinstance(element, (tuple, list)):
        element = element[0]
    return dict(element)


def _create_eagerly(next_creator, kwargs):
    """The next creator's variable, made in the eager context when a function is being
    traced (tf.function then has no variable to lift, so it traces only once).

    Lifting is turned off even when the caller is in the eager context already (the
    store's and the v1 optimizer's `init_scope`): tf.function's own creator, further
    down the chain, would otherwise wrap the variable and trace the function twice.
    """
    initial_value = kwargs.get("initial_value")
    if tf.is_tensor(initial_value) and not hasattr(initial_value, "numpy"):
        return next_creator(**kwargs)      # a graph tensor: it cannot leave the function
    kwargs["experimental_enable_variable_lifting"] = False
    if tf.executing_eagerly():
        return next_creator(**kwargs)
    with tf.init_scope():
        return next_creator(**kwargs)


class NativeModelFunctions:
    """The train and eval `tf.function`s of one registered model and its hparams.

    Args:
      model_name: a registered model ("transformer").
      hparams: model hparams with the problem attached (`add_problem_hparams`).
      strategy: a `tf.distribute.Strategy` (default: the default strategy, one device).
      num_async_replicas: the learning rate is divided by its square root (T2T).
      use_xla: compile the forward and backward pass with XLA (--xla_compile).
    """

    def __init__(self, model_name, hparams, strategy=None, num_async_replicas=1,
                 use_xla=False):
        self._model_cls = registry.model(model_name)
        self._hparams = hparams
        self._strategy = strategy or tf.distribute.get_strategy()
        self._num_async_replicas = max(int(num_async_replicas or 1), 1)
        self._use_xla = use_xla
        self.store = variable_store.VariableStore()
        self.variables = {}            # every checkpointed variable, by Estimator's name
        self._metric_variables = []
        self._train_function = None
        self._eval_function = None
        self._saver = None

    @property
    def strategy(self):
        return self._strategy

    @property
    def global_step(self):
        return self.store.variables[GLOBAL_STEP]

    def _model(self, mode):
        return self._model_cls(model_hparams.copy_hparams(self._hparams), mode)

    # ------------------------------------------------------------------ graph code
    def _build_graph(self, features):
        with self.store.scope():
            _v1.train.get_or_create_global_step()
            model = self._model(ModeKeys.TRAIN)
            model.logits_and_loss(features_of(features), use_xla=self._use_xla)

    def _replica_train_step(self, features):
        features = features_of(features)
        # Embedding gradients dense, as in the Estimator's graph (this function is never
        # saved): a sparse one costs a sparse concat gradient and a sparse Adam update.
        with self.store.scope(), common_layers.dense_gradients_in_functions():
            model = self._model(ModeKeys.TRAIN)
            tokens = train_log.count_tokens(features)
            examples = train_log.count_examples(features)
            _, _, loss, _ = model.logits_and_loss(features, use_xla=self._use_xla)
            learning_rate = learning_rate_lib.learning_rate_schedule(model.hparams)
            learning_rate /= math.sqrt(float(self._num_async_replicas))
            total_loss = model.optimize(loss, num_async_replicas=self._num_async_replicas,
                                        variables=self.store.trainable_variables())
        return tf.cast(total_loss, tf.float32), tokens, examples, learning_rate

    def _train_step(self, features):
        loss, tokens, examples, learning_rate = self._strategy.run(
            self._replica_train_step, (features,))
        mean, total = tf.distribute.ReduceOp.MEAN, tf.distribute.ReduceOp.SUM
        return (self._strategy.reduce(mean, loss, axis=None),
                self._strategy.reduce(total, tokens, axis=None),
                self._strategy.reduce(total, examples, axis=None),
                self._strategy.reduce(mean, learning_rate, axis=None),
                tf.convert_to_tensor(self.global_step))

    def _eval_step(self, features):
        features = features_of(features)

        # Should the function be traced again, it gets the metric variables of the first
        # trace back, in the same order.
        made_in_this_trace = []

        def keep_metric_variable(next_creator, **kwargs):
            index = len(made_in_this_trace)
            if index < len(self._metric_variables):
                variable = self._metric_variables[index]
            else:
                variable = _create_eagerly(next_creator, kwargs)
                self._metric_variables.append(variable)
            made_in_this_trace.append(variable)
            return variable

        with self.store.scope():
            model = self._model(ModeKeys.EVAL)
            logits, _, loss, _ = model.logits_and_loss(features)
            with tf.variable_creator_scope(keep_metric_variable):
                ops = model_specs.eval_metric_ops(model, features, logits)
        return loss, {name: tf.cast(update, tf.float32) for name, (_, update) in ops.items()}

    # ------------------------------------------------------------------ building
    def build(self, replica_element_spec, train_input_spec=None, eval_element_spec=None):
        """Create every variable (model, global step, optimizer slots) by tracing.

        `replica_element_spec`: the element spec of one replica's batches (what the
        problem's input_fn gives); `train_input_spec`: the element spec of the
        (distributed) training dataset, None to build for evaluation only;
        `eval_element_spec`: the eval dataset's, to trace the eval step now (None: at the
        first `evaluate`).
        """
        created = {}

        def record(next_creator, **kwargs):
            # A variable made while a function is traced (a v1 optimizer's beta1_power) is
            # made eagerly, once: a name asked for again is that variable.
            name = kwargs.get("name")
            if name in created:
                return created[name]
            variable = _create_eagerly(next_creator, kwargs)
            created[variable.name.split(":")[0]] = variable
            return variable

        spec = relaxed_spec(replica_element_spec)
        # Under tf.distribute's default strategy (one device) the train step's trace makes
        # the variables itself; a replica function of any other strategy cannot make them,
        # so the model is built once before it (and for an evaluation-only build).
        one_device = (not tf.distribute.has_strategy() and
                      self._strategy is tf.distribute.get_strategy())
        with self._strategy.scope(), tf.variable_creator_scope(record):
            if train_input_spec is None or not one_device:
                tf.function(self._build_graph, autograph=False).get_concrete_function(spec)
            if train_input_spec is not None:
                # Traced once, for the training dataset's own element spec: its unknown
                # dimensions are the ones that vary (a second trace would make new slots),
                # and the ones it knows (a fixed batch, the features' trailing 1s) keep the
                # layers' static-shape paths, as the Estimator's graph has them (4% faster
                # a step for fixed-shape batches than with every dimension unknown).
                self._train_function = tf.function(
                    self._train_step, autograph=False, input_signature=[train_input_spec]
                ).get_concrete_function(train_input_spec)
            self.store.freeze()   # the optimizer's slots are in it too now
        self.variables = dict(created)
        logging.info("Built %d variables (%d trainable)", len(self.variables),
                     len(self.store.trainable_variables()))
        if eval_element_spec is not None:
            self.build_eval(eval_element_spec)
        return self.variables

    def build_eval(self, eval_element_spec):
        """Trace the eval step once (after `build`; later calls return the same function).

        `evaluate` calls it with its dataset's element spec, so a run that never evaluates
        (--schedule=train) neither makes an eval dataset nor traces the eval step.
        """
        if self._eval_function is None:
            eval_element_spec = relaxed_spec(eval_element_spec)
            self._eval_function = tf.function(self._eval_step, autograph=False,
                                              input_signature=[eval_element_spec])
            self._eval_function.get_concrete_function(eval_element_spec)
        return self._eval_function

    def train_step(self, features):
        """One step: (mean loss, tokens, examples, learning rate, global step after it)."""
        # The concrete function itself: a tf.function's call looks its trace up by the
        # arguments and the ~250 captured variables each time (1.3 ms a step of Python).
        return self._train_function(features)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, dataset, steps=None):
        """{"loss": mean batch loss, metric name: streaming value} over `steps` batches
        (all of `dataset` when None), as an Estimator's evaluate computes them."""
        self.build_eval(dataset.element_spec)
        for variable in self._metric_variables:
            variable.assign(tf.zeros_like(variable))
        losses, values, batches = [], {}, 0
        for features in dataset:
            loss, values = self._eval_function(features)
            losses.append(float(loss))
            batches += 1
            if steps and batches >= steps:
                break
        if not batches:
            raise ValueError("the evaluation dataset is empty")
        metrics = {name: float(value) for name, value in values.items()}
        metrics["loss"] = sum(losses) / len(losses)
        return metrics

    # ------------------------------------------------------------------ checkpoints
    def saver(self, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0):
        """The v1 Saver of every variable under Estimator's names (made once).

        It saves each variable's first local copy (replicas hold equal values; the v1
        Saver takes plain variables only); `restore` assigns every copy.
        """
        if self._saver is None:
            var_list = {name: self._strategy.experimental_local_results(variable)[0]
                        for name, variable in self.variables.items()}
            # The v1 Saver is what writes Estimator's checkpoint files; its "deprecated"
            # notice would be noise here (every name is unique: they are the graph's).
            tf_logger = tf.get_logger()
            level = tf_logger.level
            tf_logger.setLevel("ERROR")
            try:
                self._saver = _v1.train.Saver(
                    var_list=var_list, max_to_keep=max_to_keep,
                    keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                    save_relative_paths=True)
            finally:
                tf_logger.setLevel(level)
        return self._saver

    def save(self, prefix, step):
        """Write `<prefix>-<step>` and the `checkpoint` state file; returns the path."""
        return self.saver().save(None, prefix, global_step=int(step), write_meta_graph=False)

    def restore(self, checkpoint_path):
        """Load every variable (on every replica) from a checkpoint, Estimator's or native's.

        Raises a UserError naming a variable the checkpoint lacks or has in another shape.
        """
        reader = tf.train.load_checkpoint(checkpoint_path)
        saved = reader.get_variable_to_shape_map()
        for name in sorted(self.variables):
            variable = self.variables[name]
            if name not in saved or list(saved[name]) != variable.shape.as_list():
                from t2t.core import errors
                raise errors.UserError(
                    "checkpoint %s has %s; resume with the model, hparams and optimizer it "
                    "was trained with" % (checkpoint_path, "no variable %s" % name
                                          if name not in saved else
                                          "%s in shape %s, not %s" % (
                                              name, saved[name], variable.shape.as_list())))
        with self._strategy.scope():
            for name, variable in self.variables.items():
                variable.assign(reader.get_tensor(name))

    def warm_start(self, checkpoint_dir):
        """Give trainable variables found (same name and shape) in a checkpoint its values."""
        reader = tf.train.load_checkpoint(checkpoint_dir)
        shapes = reader.get_variable_to_shape_map()
        loaded = 0
        for variable in self.store.trainable_variables():
            name = variable.name.split(":")[0]
            if name in shapes and list(shapes[name]) == variable.shape.as_list():
                variable.assign(reader.get_tensor(name))
                loaded += 1
            else:
                logging.info("Not in the checkpoint, skipped: %s", name)
        logging.info("Warm-started %d variables from %s", loaded, checkpoint_dir)

"""Name -> tf.Variable stores for running t2t's graph code (get_variable) in TF2 functions.

T2T models create their weights with `tf.compat.v1.get_variable` under variable scopes.
Inside a `tf.function` those calls go through a custom getter that answers each full name
("transformer/body/encoder/layer_0/.../kernel") with one TF2 variable, so the model code
runs unchanged and its variables keep exactly the names an Estimator gives them (the
names in `model.ckpt-N`):

    store = VariableStore()

    @tf.function
    def forward(features):
        with store.scope():
            return model(features)

    forward.get_concrete_function(feature_specs)   # tracing creates every variable
    store.freeze()                                  # later traces only reuse them
    sorted(store.variables)[:1]                     # ["transformer/body/decoder/..."]

A variable is created the first time its name is asked for (its initializer runs eagerly,
outside the function, under whatever `tf.distribute` strategy scope is active: a
MirroredStrategy gives mirrored variables); after `freeze()` an unknown name is an error
naming it. `VariableStore({name: variable})` serves existing variables only (e.g. values
read from a checkpoint).
"""
import contextlib

import tensorflow as tf

_v1 = tf.compat.v1


def default_initializer(dtype):
    """get_variable's default: Glorot uniform for floats, zeros for everything else."""
    dtype = tf.as_dtype(dtype or tf.float32)
    if dtype.is_floating:
        return _v1.glorot_uniform_initializer()
    return _v1.zeros_initializer()


class VariableStore:
    """{full name: tf.Variable} answering every `get_variable` of the code run in `scope()`.

    Args:
      variables: existing {name: variable} to serve; the store starts frozen when given.
    """

    def __init__(self, variables=None):
        self.variables = dict(variables or {})
        self._frozen = variables is not None

    @property
    def frozen(self):
        return self._frozen

    def freeze(self):
        """From now on every name must exist already (no variable is created any more)."""
        self._frozen = True

    def trainable_variables(self):
        """The trainable variables in creation order (the order of Estimator's
        trainable_variables collection, so sums over them add in the same order)."""
        return [variable for variable in self.variables.values() if variable.trainable]

    def _create(self, name, shape, dtype, initializer, trainable, kwargs):
        dtype = tf.as_dtype(dtype or tf.float32)
        if initializer is None:
            initializer = default_initializer(dtype)
        if callable(initializer):
            shape = tf.TensorShape(shape)
            if not shape.is_fully_defined():
                raise ValueError("variable %s needs a fully defined shape, got %s" %
                                 (name, shape))

            def initial_value():
                return initializer(shape.as_list(), dtype=dtype)
        else:
            value = initializer

            def initial_value():
                return tf.convert_to_tensor(value, dtype=dtype)
        aggregation = kwargs.get("aggregation") or tf.VariableAggregation.NONE
        synchronization = kwargs.get("synchronization") or tf.VariableSynchronization.AUTO
        with tf.init_scope():
            variable = tf.Variable(initial_value, name=name, dtype=dtype,
                                   trainable=True if trainable is None else trainable,
                                   aggregation=aggregation, synchronization=synchronization)
        return variable

    def getter(self, getter, name, *args, shape=None, dtype=None, initializer=None,
               trainable=None, **kwargs):
        """A variable_scope custom getter (never calls the graph's own getter)."""
        del getter, args
        # get_variable("") in a scope (how v1 optimizers name slots) asks for "scope/";
        # the graph names that variable "scope", as the checkpoint does.
        name = name.rstrip("/")
        variable = self.variables.get(name)
        if variable is not None:
            return variable
        if self._frozen:
            raise KeyError("no variable %s in the store (it has %d variables); build the "
                           "model with the same hparams as the store's" %
                           (name, len(self.variables)))
        variable = self._create(name, shape, dtype, initializer, trainable, kwargs)
        self.variables[name] = variable
        return variable

    @contextlib.contextmanager
    def scope(self):
        """Run graph code whose `get_variable` calls this store (root variable scope)."""
        with _v1.variable_scope(_v1.get_variable_scope(), custom_getter=self.getter,
                                use_resource=True):
            yield

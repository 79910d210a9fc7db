"""Teacher-student distillation (Hinton, Vinyals and Dean 2015, arXiv:1503.02531).

T2T 1.15.7's `tensor2tensor.models.distillation`, for problems with one class label per
example. The hparams name a teacher and a student (`teacher_model`, `teacher_hparams`,
`student_model`, `student_hparams`: registered names); each one's body output is averaged
over its positions and a dense layer gives `num_classes` logits. Training runs twice:

1. `distill_phase=train`: the teacher learns the task (softmax cross-entropy);
2. `distill_phase=distill` with `teacher_dir` (the first run's folder): every variable
   the teacher run made (the teacher and the input modality's) is read from its checkpoint
   and frozen, and the student learns
   `task_balance * xent(labels) + (1 - task_balance) * T**2 * xent(softmax(teacher / T))`
   with T = `distill_temperature`.

    t2t-trainer --model=distillation --hparams_set=distill_resnet_32_to_15_cifar20x5 \\
        --hparams='teacher_model=transformer_encoder,teacher_hparams=transformer_tiny,\\
    student_model=transformer_encoder,student_hparams=transformer_tiny,num_classes=2,\\
    hidden_size=128,distill_phase=train' --output_dir=teacher ...
    # then distill_phase=distill,teacher_dir=teacher --output_dir=student

T2T's only registered set distils image ResNets (`resnet_cifar_32` into `resnet_cifar_15`),
which t2t does not have; with text models the teacher and student read the inputs
embedded by this model's modality, so their `hidden_size` must equal this one's.
Variables (T2T's names): `distillation/body/teacher/...` (the teacher's body, then
`.../teacher/dense/{kernel,bias}`), `distillation/body/student/...` likewise, and the
modality's under `distillation/`.
"""
import tensorflow as tf

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.model import t2t_model

_v1 = tf.compat.v1
PHASES = ("train", "distill")


def teacher_checkpoint(teacher_dir):
    """The newest checkpoint in `teacher_dir` (or `teacher_dir` itself when a prefix)."""
    if not teacher_dir:
        raise ValueError("distillation: distill_phase=distill needs hparams.teacher_dir, the "
                         "folder of the distill_phase=train run")
    path = tf.train.latest_checkpoint(teacher_dir)
    if path is None and tf.io.gfile.exists(teacher_dir + ".index"):
        path = teacher_dir
    if path is None:
        raise ValueError("distillation: no checkpoint in teacher_dir %r; train the teacher "
                         "there first (distill_phase=train)" % teacher_dir)
    return path


def _restore_initializer(path, name):
    """An initializer reading `name` from the checkpoint `path` when the variable is
    initialised (no copy of the value in the graph)."""

    def initializer(shape, dtype=tf.float32, partition_info=None):
        del partition_info
        value = tf.raw_ops.RestoreV2(prefix=path, tensor_names=[name], shape_and_slices=[""],
                                     dtypes=[tf.as_dtype(dtype)])[0]
        return tf.ensure_shape(value, shape)

    return initializer


@registry.register_model
class Distillation(t2t_model.T2TModel):
    """Distillation from a teacher to a student network (see the module docstring)."""

    def __init__(self, hparams, mode=ModeKeys.TRAIN, problem_hparams=None,
                 data_parallelism=None, decode_hparams=None, **kwargs):
        if hparams.get("distill_phase") not in PHASES:
            raise ValueError("distillation: hparams.distill_phase is %r; set it to 'train' "
                             "(train the teacher) or 'distill' (train the student), e.g. "
                             "--hparams=distill_phase=train" % (hparams.get("distill_phase"),))
        hparams = model_hparams.copy_hparams(hparams)
        if hparams.distill_phase == "train" and hparams.get("teacher_learning_rate"):
            hparams.learning_rate = hparams.teacher_learning_rate
        elif hparams.distill_phase == "distill" and hparams.get("student_learning_rate"):
            hparams.learning_rate = hparams.student_learning_rate
        problem_hparams = problem_hparams or model_hparams.attached_problem_hparams(hparams)
        models = {}
        for role in ("teacher", "student"):
            model_name, hparams_name = hparams.get(role + "_model"), hparams.get(role + "_hparams")
            if not model_name or not hparams_name:
                raise ValueError("distillation: set hparams.%s_model and hparams.%s_hparams "
                                 "(registered names, e.g. transformer_encoder and "
                                 "transformer_tiny)" % (role, role))
            role_hparams = registry.hparams(hparams_name)
            if (problem_hparams and problem_hparams.modality.get("inputs") ==
                    ModalityType.SYMBOL and role_hparams.hidden_size != hparams.hidden_size):
                raise ValueError(
                    "distillation: %s_hparams %s has hidden_size %d but the inputs are "
                    "embedded with the distillation's hidden_size %d; set "
                    "--hparams=hidden_size=%d" % (role, hparams_name, role_hparams.hidden_size,
                                                  hparams.hidden_size, role_hparams.hidden_size))
            models[role] = registry.model(model_name)(role_hparams, mode, problem_hparams,
                                                      data_parallelism, decode_hparams)
        self.teacher_hparams, self.teacher_model = models["teacher"].hparams, models["teacher"]
        self.student_hparams, self.student_model = models["student"].hparams, models["student"]
        super().__init__(hparams, mode, problem_hparams, data_parallelism, decode_hparams,
                         **kwargs)
        self._checkpoint = None
        self._checkpoint_names = None

    @property
    def is_distilling(self):
        return self._hparams.distill_phase == "distill"

    def _teacher_getter(self, getter, name, *args, **kwargs):
        """In the distill phase: the teacher run's variables, read from its checkpoint
        and not trained."""
        if self._checkpoint is None:
            self._checkpoint = teacher_checkpoint(self._hparams.get("teacher_dir"))
            self._checkpoint_names = set(
                tf.train.load_checkpoint(self._checkpoint).get_variable_to_shape_map())
        if name not in self._checkpoint_names:
            raise ValueError("distillation: %s is not in the teacher checkpoint %s; distil "
                             "with the teacher_model, teacher_hparams and problem the teacher "
                             "was trained with" % (name, self._checkpoint))
        kwargs["trainable"] = False
        kwargs["initializer"] = _restore_initializer(self._checkpoint, name)
        return getter(name, *args, **kwargs)

    def bottom(self, features):
        """The modalities; while distilling their variables are the teacher run's, frozen
        (T2T froze them without reading them: random input embeddings for text)."""
        if not self.is_distilling:
            return super().bottom(features)
        with _v1.variable_scope(_v1.get_variable_scope(), custom_getter=self._teacher_getter):
            return super().bottom(features)

    def _logits(self, model, features):
        outputs = model.body(features)
        if isinstance(outputs, tuple):
            outputs = outputs[0]
        outputs = tf.reduce_mean(outputs, axis=[1, 2])
        return common_layers.dense(outputs, self._hparams.num_classes, name="dense")

    def body(self, features):
        """-> (logits [B, 1, 1, 1, num_classes], {"training": the phase's loss})."""
        hp = self._hparams
        with _v1.variable_scope("teacher", custom_getter=(
                self._teacher_getter if self.is_distilling else None)):
            teacher_logits = self._logits(self.teacher_model, features)
        outputs = teacher_logits
        if self.is_distilling:
            with _v1.variable_scope("student"):
                student_logits = self._logits(self.student_model, features)
            outputs = student_logits
        logits = tf.reshape(outputs, [-1, 1, 1, 1, hp.num_classes])
        if "targets_raw" not in features:  # PREDICT: no labels, no loss
            return logits
        targets = tf.reshape(features["targets_raw"], [-1])
        one_hot_targets = tf.one_hot(targets, hp.num_classes, dtype=tf.float32)
        if not self.is_distilling:
            loss = tf.nn.softmax_cross_entropy_with_logits(labels=one_hot_targets,
                                                           logits=teacher_logits)
        else:
            task_xent = tf.nn.softmax_cross_entropy_with_logits(labels=one_hot_targets,
                                                                logits=student_logits)
            teacher_targets = tf.nn.softmax(teacher_logits / hp.distill_temperature)
            distill_xent = tf.nn.softmax_cross_entropy_with_logits(
                labels=tf.stop_gradient(teacher_targets),
                logits=student_logits / hp.distill_temperature)
            # Scaled so the soft targets' gradients match the hard targets' in size.
            distill_xent *= hp.distill_temperature ** 2
            if common_layers.should_generate_summaries():
                _v1.summary.scalar("distill_xent", tf.reduce_mean(distill_xent))
            loss = hp.task_balance * task_xent + (1 - hp.task_balance) * distill_xent
        return logits, {"training": tf.reduce_mean(loss)}

    def top(self, body_output, features):
        """The body's output is the logits."""
        del features
        return body_output


def distill_base():
    """The common distillation hparams (T2T's: ResNet's training settings)."""
    hparams = common_hparams.basic_params1()
    # The teacher and the student: registered model and hparams set names.
    hparams.add_hparam("teacher_model", "")
    hparams.add_hparam("teacher_hparams", "")
    hparams.add_hparam("student_model", "")
    hparams.add_hparam("student_hparams", "")
    # "train" (the teacher) or "distill" (the student; needs teacher_dir). T2T's
    # t2t_distill set both in turn; with t2t-trainer, set them with --hparams.
    hparams.add_hparam("distill_phase", None)
    hparams.add_hparam("teacher_dir", "")
    hparams.add_hparam("task_balance", 1.0)
    hparams.add_hparam("distill_temperature", 1.0)
    hparams.add_hparam("num_classes", 10)
    # Learning rates of either phase, instead of learning_rate when set.
    hparams.add_hparam("teacher_learning_rate", None)
    hparams.add_hparam("student_learning_rate", None)
    hparams.batch_size = 128
    hparams.optimizer = "Momentum"
    hparams.optimizer_momentum_momentum = 0.9
    hparams.optimizer_momentum_nesterov = True
    hparams.weight_decay = 1e-4
    hparams.clip_grad_norm = 0.0
    # (base_lr=0.1) * (batch_size=128*8 (on TPU, or 8 GPUs)=1024) / (256.)
    hparams.learning_rate = 0.4
    hparams.learning_rate_decay_scheme = "cosine"
    # 120k steps of image_imagenet224: one cosine decay, no cycles.
    hparams.learning_rate_cosine_cycle_steps = 120000
    hparams.initializer = "normal_unit_scaling"
    hparams.initializer_gain = 2.
    return hparams


@registry.register_hparams
def distill_resnet_32_to_15_cifar20x5():
    """T2T's ResNet-32 into ResNet-15 on CIFAR-100's 20 coarse classes (t2t has no resnet:
    override the teacher and student, see the module docstring)."""
    hparams = distill_base()
    hparams.teacher_model = "resnet"
    hparams.teacher_hparams = "resnet_cifar_32"
    hparams.student_model = "resnet"
    hparams.student_hparams = "resnet_cifar_15"
    hparams.optimizer_momentum_nesterov = True
    # (base_lr=0.1) * (batch_size=128*8 (on TPU, or 8 GPUs)=1024) / (256.)
    hparams.teacher_learning_rate = 0.25 * 128. * 8. / 256.
    hparams.student_learning_rate = 0.2 * 128. * 8. / 256.
    hparams.learning_rate_decay_scheme = "piecewise"
    hparams.add_hparam("learning_rate_boundaries", [40000, 60000, 80000])
    hparams.add_hparam("learning_rate_multiples", [0.1, 0.01, 0.001])
    hparams.task_balance = 0.28
    hparams.distill_temperature = 2.0
    hparams.num_classes = 20
    return hparams

"""t2t: Tensor2Tensor-style sequence-model toolkit on TensorFlow.

Two stacks, chosen by the Python version (environment markers below):

- Python 3.9-3.11: TensorFlow 2.15.1, the last release with `tf.estimator` (the Estimator
  backend, TPUEstimator, parameter servers), numpy 1, protobuf 4.25 on 3.11
  (its compiled implementation; see TFDS below).
- Python 3.12+: stack "A", TensorFlow 2.21.0 with tf-keras 2.21.0, tensorflow-text 2.21.1 and
  tensorboard 2.21.0, numpy 2, protobuf 6. It is the newest TensorFlow with which every extra
  (tfds, beam, hub, tune, test) resolves and `pip check` is clean on both 3.12 and 3.13; stack
  "B" (TF 2.20, TF Model Garden's pin) resolves too but gains nothing t2t uses, so the newest
  wins. tf-keras and tensorflow-text must match TensorFlow's minor version. t2t runs Keras 2
  (tf-keras) there, as TF Model Garden does: t2t sets TF_USE_LEGACY_KERAS=1 before TensorFlow
  is imported (t2t/__init__.py). TF 2.21 no longer installs tensorboard, without which
  `tf.summary` raises, hence the pin. apache-beam 2.77.0 caps protobuf below 7, so protobuf is
  capped for every install: one protobuf whichever extras are chosen.
"""
from setuptools import find_packages, setup

OLD = 'python_version < "3.12"'   # TensorFlow 2.15 (Estimator)
NEW = 'python_version >= "3.12"'  # TensorFlow 2.21 (native backend)


def on(marker, *requirements):
    return ["%s; %s" % (r, marker) for r in requirements]


# tensorflow-hub 0.16.1 imports pkg_resources, which setuptools 81 removed.
HUB = (on(OLD, "tensorflow-hub==0.16.1", "tf-keras==2.15.1")
       + on(NEW, "tensorflow-hub==0.16.1", "setuptools<81"))
# TF 2.15: tensorflow-metadata 1.15.0, whose protobuf>=4.25.2,<5 on Python 3.11 gives
# protobuf's C (upb) implementation; 1.14.0 capped protobuf below 4.21, and 3.20.3 has no
# compiled wheel for 3.11, so every graph, checkpoint and summary went through pure-Python
# protobuf: one 20-step t2t-trainer run took 92.5 s against 29.5 s (same loss), measured
# side by side. (1.16+ allows protobuf 5, which TF 2.15 refuses.) TF 2.21: 4.9.9 with
# 1.17.2 resolve beside protobuf 6 and apache-beam 2.77.0 on 3.12 and 3.13 with a clean pip
# check, and are the pair the suite ran on (4.9.10 with 1.21.0 resolve too).
TFDS = (on(OLD, "tensorflow-datasets==4.9.4", "tensorflow-metadata==1.15.0")
        + on(NEW, "tensorflow-datasets==4.9.9", "tensorflow-metadata==1.17.2"))
# Hyperparameter search (t2t-trainer --hparams_range); 4.5.0 installs on both stacks.
TUNE = ["optuna==4.5.0"]
# t2t-cache-tasks (seqio's cache format on Apache Beam). 2.77.0 resolves beside TF 2.15.1,
# numpy<2 and TF 2.15's protobuf, and beside TF 2.21 with numpy 2 and protobuf 6.
BEAM = ["apache-beam==2.77.0"]
# The CTranslate2 engine (t2t-exporter --export_format=ctranslate2, t2t-decoder
# --engine=ctranslate2, t2t.load(..., engine="ctranslate2")): C++ int8/float32 inference on
# CPU; 4.8 has wheels for Python 3.9-3.13 and works beside numpy 1 and 2.
CTRANSLATE2 = ["ctranslate2>=4.8,<4.9"]

setup(
    name="t2t",
    version="0.1.0",
    description="Registry-driven datasets, models and trainers in the Tensor2Tensor style, "
                "on TensorFlow 2.15 (Python 3.9-3.11) and 2.21 (Python 3.12+)",
    packages=find_packages(include=["t2t", "t2t.*"]),
    python_requires=">=3.9,<3.14",
    install_requires=[
        "absl-py",
        "requests",
        "sympy",
        "sacrebleu>=2,<3",
    ] + on(OLD,
           "tensorflow==2.15.1",
           "tensorflow-estimator==2.15.0",
           "numpy>=1.23.5,<2",
           # t2t.seqio: SentencePiece vocabularies in Python and in tf.data graphs. 0.2.1+
           # ships protobuf-5 code that fails beside TF 2.15's protobuf 4.25;
           # tensorflow-text 2.15.0 is the build for TF 2.15.
           "sentencepiece==0.2.0",
           "tensorflow-text==2.15.0",
    ) + on(NEW,
           "tensorflow==2.21.0",
           "tf-keras==2.21.0",
           "tensorflow-text==2.21.1",
           "tensorboard==2.21.0",
           "numpy>=2,<3",
           "protobuf>=5.28,<7",
           # 0.2.1 is the first with Python 3.13 wheels.
           "sentencepiece==0.2.1",
    ),
    extras_require={
        "tune": TUNE,
        # Loading t2t's TF Hub SavedModels with hub.KerasLayer (t2t-exporter --export_as_tfhub).
        "hub": HUB,
        # t2t.seqio.TfdsDataSource (TensorFlow Datasets).
        "tfds": TFDS,
        "beam": BEAM,
        "ctranslate2": CTRANSLATE2,
        # pytest-xdist: `make test` runs test files in parallel processes (CI runs the
        # suite on two stacks within its hour).
        "test": ["pytest", "pytest-xdist", "hypothesis"] + HUB + TFDS + TUNE + BEAM +
                CTRANSLATE2,
    },
    entry_points={
        "console_scripts": [
            "t2t-datagen=t2t.bin.t2t_datagen:console_main",
            "t2t-trainer=t2t.bin.t2t_trainer:console_main",
            "t2t-decoder=t2t.bin.t2t_decoder:console_main",
            "t2t-exporter=t2t.bin.t2t_exporter:console_main",
            "t2t-bleu=t2t.bin.t2t_bleu:console_main",
            "t2t-avg-all=t2t.bin.t2t_avg_all:console_main",
            "t2t-tydi-eval=t2t.bin.t2t_tydi_eval:console_main",
            "t2t-cache-tasks=t2t.bin.t2t_cache_tasks:console_main",
            "t2t-tydi-synthetic=t2t.bin.t2t_tydi_synthetic:console_main",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3.9",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
    ],
)

"""t2t: Tensor2Tensor-style sequence-model toolkit on TensorFlow 2.15."""
from setuptools import find_packages, setup

setup(
    name="t2t",
    version="0.1.0",
    description="Registry-driven datasets, models and trainers in the Tensor2Tensor style, on TF 2.15",
    packages=find_packages(include=["t2t", "t2t.*"]),
    python_requires=">=3.9,<3.12",
    install_requires=[
        "tensorflow==2.15.1",
        "tensorflow-estimator==2.15.0",
        "numpy>=1.23.5,<2",
        "absl-py",
        "requests",
        "sympy",
        "sacrebleu>=2,<3",
        # t2t.seqio: SentencePiece vocabularies in Python and in tf.data graphs. 0.2.1+ ships
        # protobuf-5 code that fails beside TF 2.15's protobuf 4.25; tensorflow-text 2.15.0
        # is the build for TF 2.15.
        "sentencepiece==0.2.0",
        "tensorflow-text==2.15.0",
    ],
    extras_require={
        # Hyperparameter search (t2t-trainer --hparams_range); 4.5.0 installs beside
        # TF 2.15 and numpy<2.
        "tune": ["optuna==4.5.0"],
        # Loading t2t's TF Hub SavedModels with hub.KerasLayer (t2t-exporter
        # --export_as_tfhub). tensorflow-hub 0.16 needs tf-keras; an unpinned tf-keras
        # pulls a newer TensorFlow, so it stays on the 2.15 line.
        "hub": ["tensorflow-hub==0.16.1", "tf-keras==2.15.1"],
        # t2t.seqio.TfdsDataSource (TensorFlow Datasets). tensorflow-metadata 1.15+ ships
        # protobuf-5 code, so it is pinned to 1.14.0.
        "tfds": ["tensorflow-datasets==4.9.4", "tensorflow-metadata==1.14.0"],
        # t2t-cache-tasks (seqio's cache format on Apache Beam: DirectRunner, Flink, Spark,
        # Dataflow). 2.77.0 resolves beside TF 2.15.1, numpy<2 and the protobuf TF pins
        # (3.20.3 with tensorflow-metadata 1.14.0, 4.25.9 without it).
        "beam": ["apache-beam==2.77.0"],
        "test": ["pytest", "hypothesis", "tensorflow-hub==0.16.1", "tf-keras==2.15.1",
                 "tensorflow-datasets==4.9.4", "tensorflow-metadata==1.14.0",
                 "optuna==4.5.0", "apache-beam==2.77.0"],
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
    ],
)

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
    ],
    extras_require={
        # Hyperparameter search (t2t-trainer --hparams_range); 4.5.0 installs beside
        # TF 2.15 and numpy<2.
        "tune": ["optuna==4.5.0"],
        # sentencepiece: bench/bench_vocab.py's baseline (make bench runs with this extra).
        "test": ["pytest", "hypothesis", "optuna==4.5.0", "sentencepiece==0.2.0"],
    },
    entry_points={
        "console_scripts": [
            "t2t-datagen=t2t.bin.t2t_datagen:console_main",
            "t2t-trainer=t2t.bin.t2t_trainer:console_main",
            "t2t-decoder=t2t.bin.t2t_decoder:console_main",
            "t2t-exporter=t2t.bin.t2t_exporter:console_main",
            "t2t-bleu=t2t.bin.t2t_bleu:console_main",
            "t2t-avg-all=t2t.bin.t2t_avg_all:console_main",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3.9",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
    ],
)

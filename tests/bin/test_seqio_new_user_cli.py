"""What a new user of --mixture_or_task_name runs into, answered before any work: a task
whose files are missing, a mixture whose tasks disagree, a missing or partial cache. Each
is one line on stderr and exit 2 from t2t-trainer, t2t-decoder and t2t-cache-tasks (run in
this process: the checks come before TensorFlow does anything)."""
import itertools
import os
import sys

import pytest
from absl import flags
from absl.testing import flagsaver

from t2t.bin import cli

_COUNTER = itertools.count()

MODULE = '''
import tensorflow as tf
from t2t import seqio

BYTES = seqio.ByteVocabulary()


def parse_tsv(line):
    fields = tf.strings.split(line, "\\t")
    return {"inputs": fields[0], "targets": fields[1]}


def add(name, paths, features=("inputs", "targets"), vocab=BYTES):
    seqio.TaskRegistry.add(
        name, seqio.TextLineDataSource(paths),
        preprocessors=[seqio.map_over_dataset(parse_tsv), seqio.preprocessors.tokenize,
                       seqio.CacheDatasetPlaceholder(), seqio.preprocessors.append_eos],
        output_features={f: seqio.Feature(BYTES if f == "inputs" else vocab)
                         for f in features})

%s
'''


@pytest.fixture
def tasks_module(tmp_path, monkeypatch):
    """write(body) -> (module name, prefix of its names): a --module_import module."""
    (tmp_path / "train.tsv").write_text("ab\tab\nbc\tbc\n")
    (tmp_path / "dev.tsv").write_text("ab\tab\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(body):
        name = "new_user_tasks_%d_%d" % (os.getpid(), next(_COUNTER))
        prefix = name.replace("new_user_tasks", "t")
        text = MODULE % body.format(p=prefix, train=tmp_path / "train.tsv",
                                    dev=tmp_path / "dev.tsv", root=tmp_path)
        (tmp_path / (name + ".py")).write_text(text)
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name, prefix

    yield write
    from t2t import seqio
    seqio.set_global_cache_dirs([])


def run(program, capsys, *args):
    """(exit code, stderr lines) of `program` run in this process."""
    from t2t.bin import t2t_cache_tasks, t2t_decoder, t2t_trainer
    main = {"t2t-trainer": lambda argv: t2t_trainer.main(argv, ""),
            "t2t-decoder": t2t_decoder.main, "t2t-cache-tasks": t2t_cache_tasks.main}[program]
    with flagsaver.flagsaver():
        flags.FLAGS.unparse_flags()
        with pytest.raises(SystemExit) as info:
            cli.run_main(main, program, argv=[program] + list(args))
    return info.value.code, capsys.readouterr().err.strip().splitlines()


def model_args(tmp_path, module, task):
    return ["--mixture_or_task_name=" + task, "--module_import=" + module,
            "--task_feature_lengths=inputs=8,targets=8", "--model=transformer",
            "--hparams_set=transformer_tiny", "--output_dir=%s" % (tmp_path / "model")]


def assert_one_error_line(lines, expected_start):
    errors = [line for line in lines if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith(expected_start), lines
    assert not any("Traceback" in line for line in lines), lines
    return errors[0]


@pytest.mark.parametrize("program", ["t2t-trainer", "t2t-decoder", "t2t-cache-tasks"])
def test_missing_task_file_names_task_split_and_pattern(tasks_module, tmp_path, capsys,
                                                        program):
    module, p = tasks_module('add("{p}_gone", {{"train": "{root}/nope-*.tsv", '
                             '"validation": "{root}/dev-missing.tsv"}})')
    split, pattern = ("validation", "%s/dev-missing.tsv" % tmp_path) \
        if program == "t2t-decoder" else ("train", "%s/nope-*.tsv" % tmp_path)
    if program == "t2t-cache-tasks":
        args = ["--module_import=" + module, "--tasks=%s_gone" % p,
                "--output_cache_dir=%s" % (tmp_path / "cache")]
    else:
        args = model_args(tmp_path, module, p + "_gone") + ["--train_steps=2"]
    code, lines = run(program, capsys, *args)
    assert code == 2
    assert_one_error_line(lines, "%s: error: task '%s_gone', split '%s': no file matches %s; "
                          "check the path" % (program, p, split, pattern))
    assert not os.path.exists(tmp_path / "model")   # nothing written
    assert not os.path.exists(tmp_path / "cache" / (p + "_gone"))


@pytest.mark.parametrize("kind", ["features", "vocabulary"])
def test_mixture_whose_tasks_disagree_is_one_line(tasks_module, tmp_path, capsys, kind):
    other = ('features=("targets",)' if kind == "features"
             else "vocab=seqio.PassThroughVocabulary(300)")
    mixture = 'seqio.MixtureRegistry.add("{p}_mix", [("{p}_a", 1), ("{p}_b", 1)])'
    module, p = tasks_module('add("{p}_a", {{"train": "{train}", "validation": "{dev}"}})\n'
                             'add("{p}_b", {{"train": "{train}", "validation": "{dev}"}}, %s)\n'
                             % other + mixture)
    code, lines = run("t2t-trainer", capsys, *model_args(tmp_path, module, p + "_mix"))
    assert code == 2
    line = assert_one_error_line(lines, "t2t-trainer: error: Mixture '%s_mix': " % p)
    assert ("task '%s_b' has no output feature 'inputs'" % p if kind == "features"
            else "feature 'targets' of task '%s_b' has vocabulary" % p) in line


@pytest.mark.parametrize("state", ["missing", "partial"])
def test_use_cached_tasks_without_a_completed_cache_gives_the_command(
        tasks_module, tmp_path, capsys, state):
    cache = tmp_path / "cache"
    module, p = tasks_module('add("{p}_c", {{"train": "{train}", "validation": "{dev}"}})\n'
                             'seqio.add_global_cache_dirs(["{root}/cache"])')
    if state == "partial":   # what a killed t2t-cache-tasks leaves: files, no COMPLETED
        os.makedirs(cache / (p + "_c"))
        (cache / (p + "_c") / "train.tfrecord-00000-of-00002").write_bytes(b"x")
    for program in ("t2t-trainer", "t2t-decoder"):
        code, lines = run(program, capsys, *model_args(tmp_path, module, p + "_c"),
                          "--use_cached_tasks")
        assert code == 2
        line = assert_one_error_line(lines, "%s: error: task '%s_c' has no completed cache "
                                     "in %s" % (program, p, cache))
        assert line.endswith("write it with: t2t-cache-tasks --module_import=%s --tasks=%s_c "
                             "--output_cache_dir=%s" % (module, p, cache))

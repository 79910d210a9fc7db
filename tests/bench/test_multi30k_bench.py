"""bench/bench_multi30k.py and multi30k_sweep.py: how results are kept and chosen.

The benches themselves run for hours (`make bench`); these check the bookkeeping that
decides what bench/results/multi30k.json says: one row per system and stack, replaced
only by a run of the same, and a sweep's best chosen on val, never on test.
"""
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "bench")
sys.path.insert(0, BENCH)

bench_multi30k = pytest.importorskip("bench_multi30k")
multi30k_sweep = pytest.importorskip("multi30k_sweep")

T2T_313 = "Python 3.13, TensorFlow 2.21.0, native backend"
T2T_311 = "Python 3.11, TensorFlow 2.15.1, estimator backend"


def row(system, stack, bleu, **extra):
    return dict({"system": system, "stack": stack, "budgets": [{"minutes": 10, "bleu": bleu}]},
                **extra)


def test_a_run_replaces_only_the_rows_of_its_system_and_stack():
    stored = [row("eole", "eole 0.6.4", 2.4), row("t2t", T2T_311, 13.2),
              row("opennmt_tf", "OpenNMT-tf 2.32.0", 0.2)]
    merged = bench_multi30k.merge_rows(stored, [row("t2t", T2T_313, 14.2)])
    assert [(r["system"], r["stack"]) for r in merged] == [
        ("t2t", T2T_311), ("t2t", T2T_313), ("opennmt_tf", "OpenNMT-tf 2.32.0"),
        ("eole", "eole 0.6.4")]
    rerun = bench_multi30k.merge_rows(merged, [row("t2t", T2T_311, 13.5)])
    assert [r["budgets"][0]["bleu"] for r in rerun if r["system"] == "t2t"] == [14.2, 13.5]
    ablation = row("eole", "eole 0.6.4", 12.1, variant="peer_embedding_init=t2t")
    with_ablation = bench_multi30k.merge_rows(rerun, [ablation])
    assert len(with_ablation) == 5 and ablation in with_ablation
    # Rows from before "stack" existed are keyed by their version string.
    old = {"system": "eole", "version": "eole 0.6.4", "budgets": []}
    assert bench_multi30k.row_key(old) == ("eole", "eole 0.6.4", "default", "")
    # A tagged row (a same-day speed check) sits beside the untagged one of its stack.
    check = row("t2t", T2T_313, 9.0, tag="speed_check")
    with_check = bench_multi30k.merge_rows(with_ablation, [check])
    assert len(with_check) == 6 and check in with_check
    assert [r["budgets"][0]["bleu"] for r in with_check
            if r["system"] == "t2t" and r["stack"] == T2T_313] == [14.2, 9.0]


def test_the_sweeps_best_is_chosen_on_val_among_default_points_run_to_the_budget():
    points = [
        {"system": "t2t", "minutes": 10, "val_bleu": 12.9, "test_bleu": 15.0,
         "learning_rate": 1.5, "warmup_steps": 300},
        {"system": "t2t", "minutes": 10, "val_bleu": 13.8, "test_bleu": 14.2,
         "learning_rate": 1.5, "warmup_steps": 600},
        {"system": "t2t", "minutes": 10, "val_bleu": 20.0, "test_bleu": 20.0,
         "learning_rate": 1.5, "warmup_steps": 300, "variant": "t2t_hparams_set=x"},
        {"system": "t2t", "minutes": 10, "val_bleu": 21.0, "test_bleu": 21.0,
         "learning_rate": 1.5, "warmup_steps": 300, "max_steps": 200},
        {"system": "t2t", "minutes": 20, "val_bleu": 25.0, "test_bleu": 25.0,
         "learning_rate": 3.0, "warmup_steps": 300},
        {"system": "eole", "minutes": 10, "val_bleu": None, "test_bleu": None,
         "learning_rate": 1.5, "warmup_steps": 300},
    ]
    best = multi30k_sweep.best_summary(points, 10)
    assert list(best) == ["t2t"]
    assert (best["t2t"]["warmup_steps"], best["t2t"]["test_bleu"]) == (600, 14.2)
    assert best["t2t"]["out_of_points"] == 2


def test_a_sweep_trains_only_the_points_it_does_not_hold_for_its_budget_variant_and_steps():
    stored = [{"system": "opennmt_tf", "minutes": 10, "learning_rate": 1.5, "warmup_steps": 300},
              {"system": "opennmt_tf", "minutes": 10, "learning_rate": 3.0, "warmup_steps": 300,
               "variant": "peer_batching=t2t", "max_steps": 200}]
    grid = ["--systems=opennmt_tf", "--learning_rates=1.5,3", "--warmups=300"]
    args = multi30k_sweep.parse_args(grid)
    assert multi30k_sweep.points_to_train(args, stored) == [("opennmt_tf", 3.0, 300)]
    args = multi30k_sweep.parse_args(grid + ["--peer_batching=t2t", "--max_steps=200"])
    assert multi30k_sweep.points_to_train(args, stored) == [("opennmt_tf", 1.5, 300)]
    args = multi30k_sweep.parse_args(grid + ["--peer_batching=t2t"])  # to the budget
    assert multi30k_sweep.points_to_train(args, stored) == [("opennmt_tf", 1.5, 300),
                                                            ("opennmt_tf", 3.0, 300)]
    args = multi30k_sweep.parse_args(grid + ["--redo"])
    assert len(multi30k_sweep.points_to_train(args, stored)) == 2


def test_the_trainers_loss_lines_become_the_curve():
    text = ("train transformer: step 10, loss 6.5000 (mean of 10 steps), 3,000 tokens/s\n"
            "train transformer: step 20, loss 5.2500 (mean of 10 steps), 3,100 tokens/s\n"
            "Trainable Variables Total size: 7597824\n")
    assert bench_multi30k.t2t_loss_curve(text) == [(10, 6.5), (20, 5.25)]
    assert bench_multi30k.t2t_parameter_count(text) == 7597824


multi30k_long = pytest.importorskip("multi30k_long")


def test_the_long_run_ends_after_patience_evaluations_without_a_val_gain():
    class Args:
        min_delta, patience, max_hours = 0.1, 2, 8.0

    def state(*val_bleus, minutes=100.0):
        return {"points": [{"val_bleu": v} for v in val_bleus], "minutes": minutes}

    assert multi30k_long.best_index(state(30.0, 30.05, 31.0)["points"], 0.1) == 2
    assert multi30k_long.best_index(state(30.0, 30.05, 30.1)["points"], 0.1) == 0
    assert multi30k_long.stop_reason(state(), Args) is None
    assert multi30k_long.stop_reason(state(20.0, 25.0, 24.9), Args) is None
    # 30.05 and 30.08 are within min_delta of 30.0: two evaluations without a gain.
    assert multi30k_long.stop_reason(state(20.0, 30.0, 30.05, 30.08), Args) == "patience"
    assert multi30k_long.stop_reason(state(20.0, 25.0, minutes=480.0), Args) == "max_hours"


def test_a_long_run_from_another_runs_checkpoint_has_no_loss_until_its_first_segment(tmp_path):
    log_path = tmp_path / "train.log"
    assert multi30k_long.last_loss(str(log_path)) is None
    log_path.write_text("train transformer: step 2440, loss 0.9100 (mean of 10 steps), x\n"
                        "train transformer: step 2450, loss 0.8739 (mean of 10 steps), x\n")
    assert multi30k_long.last_loss(str(log_path)) == 0.8739


def test_source_eos_copy_ends_each_source_line_with_t2ts_eos_and_adds_it_to_the_vocab(tmp_path):
    peer = tmp_path / "peer_data"
    peer.mkdir()
    (peer / "train.src").write_text("t17 t4\nt9\n")
    (peer / "train.tgt").write_text("t5 t6\nt7\n")
    (peer / "vocab.txt").write_text("t2\nt3\n")
    (peer / "DONE").write_text("")
    out = bench_multi30k.with_source_eos(str(peer), str(tmp_path / "eos"))
    assert open(os.path.join(out, "train.src")).read() == "t17 t4 t1\nt9 t1\n"
    assert open(os.path.join(out, "train.tgt")).read() == "t5 t6\nt7\n"
    assert open(os.path.join(out, "vocab.txt")).read() == "t2\nt3\nt1\n"
    assert os.path.exists(os.path.join(out, "DONE"))
    # The peers' vocabulary grows by the one token (and their four own come on top).
    assert bench_multi30k.multi30k_peers.peer_vocabulary_size({"peer_dir": out}) == 7
    # Made once: a second call leaves the copy as it is.
    (peer / "train.src").write_text("changed\n")
    bench_multi30k.with_source_eos(str(peer), out)
    assert open(os.path.join(out, "train.src")).read() == "t17 t4 t1\nt9 t1\n"


@pytest.mark.parametrize("flags, variants", [
    ([], ("default", "default")),
    (["--peer_source_eos"], ("default", "peer_source_eos=true")),
    (["--peer_embedding_init=t2t", "--peer_source_eos"],
     ("default", "peer_embedding_init=t2t,peer_source_eos=true")),
    (["--t2t_hparams_set=x"], ("t2t_hparams_set=x", "default")),
])
def test_an_ablations_variant_names_every_change_it_makes(flags, variants):
    args = bench_multi30k.parse_args(["--learning_rate=1.5", "--warmup_steps=300"] + flags)
    assert (bench_multi30k.variant_of("t2t", args),
            bench_multi30k.variant_of("eole", args)) == variants


@pytest.mark.parametrize("biases, opennmt_tf, eole", [
    ("default", "mha_bias=True, output_layer_bias=True",
     "add_ffnbias: false\n  generator_bias: true"),
    ("t2t", "mha_bias=False, output_layer_bias=False",
     "add_ffnbias: true\n  generator_bias: false"),
])
def test_the_peer_biases_ablation_gives_the_peers_t2ts_biases(tmp_path, biases, opennmt_tf,
                                                               eole):
    peer_dir = tmp_path / "peer_data"
    peer_dir.mkdir()
    (peer_dir / "vocab.txt").write_text("t2\nt3\n")
    args = bench_multi30k.parse_args(["--learning_rate=1.5", "--warmup_steps=300",
                                      "--peer_biases=" + biases,
                                      "--venv_dir=%s" % (tmp_path / "venvs")])
    peers = bench_multi30k.multi30k_peers
    configs = {}
    for name in ("opennmt_tf", "eole"):
        run_dir = tmp_path / name
        run_dir.mkdir()
        peer = peers.PEERS[name](args, {"peer_dir": str(peer_dir)}, str(run_dir), print,
                                 make_venv=False)
        peer.train_command()
        configs[name] = "".join(open(path).read() for path in sorted(run_dir.iterdir()))
    assert opennmt_tf in configs["opennmt_tf"]
    assert eole in configs["eole"]
    assert not (tmp_path / "venvs").exists()
    expected = "default" if biases == "default" else "peer_biases=t2t"
    assert bench_multi30k.variant_of("eole", args) == expected


multi30k_speed = pytest.importorskip("multi30k_speed")


def test_the_speed_rounds_rotate_so_no_system_always_runs_first():
    systems = ["t2t", "opennmt_tf", "eole"]
    orders = [multi30k_speed.round_order(systems, i) for i in range(4)]
    assert orders == [["t2t", "opennmt_tf", "eole"], ["opennmt_tf", "eole", "t2t"],
                      ["eole", "t2t", "opennmt_tf"], ["t2t", "opennmt_tf", "eole"]]


def test_speed_ratios_pair_runs_of_the_same_round_and_skip_a_missing_rate():
    rounds = [{"t2t": 300, "opennmt_tf": 250, "eole": 200},
              {"t2t": 330, "opennmt_tf": 330, "eole": None},
              {"t2t": None, "opennmt_tf": 100, "eole": 100},
              {"t2t": 270, "opennmt_tf": 300, "eole": 300}]
    medians, ratios = multi30k_speed.summary(rounds, ["t2t", "opennmt_tf", "eole"])
    assert medians == {"t2t": 300, "opennmt_tf": 275, "eole": 200}
    assert ratios["opennmt_tf"] == {"per_round": [1.2, 1.0, 0.9], "median": 1.0,
                                    "min": 0.9, "max": 1.2}
    assert ratios["eole"]["per_round"] == [1.5, 0.9]
    assert ratios["eole"]["median"] == 1.2


def test_the_speed_runs_stop_at_their_steps_and_reject_a_bad_count():
    args = multi30k_speed.parse_args(["--steps=100", "--rounds=2", "--out="])
    assert (args.max_steps, args.rounds, args.budgets) == (100, 2, [60])
    # --max_steps follows --steps unless given after it.
    assert multi30k_speed.parse_args(["--steps=50", "--out="]).max_steps == 50
    assert multi30k_speed.parse_args(["--steps=50", "--max_steps=150", "--out="]).max_steps == 150
    with pytest.raises(SystemExit, match="--rounds=0 --steps=100: give positive numbers"):
        multi30k_speed.parse_args(["--rounds=0"])


@pytest.mark.parametrize("batching", ["default", "t2t"])
def test_the_peer_batching_ablation_repeats_opennmt_tfs_data_before_batching(tmp_path,
                                                                              batching):
    peer_dir = tmp_path / "peer_data"
    peer_dir.mkdir()
    (peer_dir / "vocab.txt").write_text("t2\nt3\n")
    args = bench_multi30k.parse_args(["--learning_rate=1.5", "--warmup_steps=300",
                                      "--systems=t2t,opennmt_tf",
                                      "--peer_batching=" + batching])
    peer = bench_multi30k.multi30k_peers.PEERS["opennmt_tf"](
        args, {"peer_dir": str(peer_dir)}, str(tmp_path), print, make_venv=False)
    peer.write_config()
    model_py = (tmp_path / "model.py").read_text()
    assert "BATCHING = %r" % batching in model_py
    compile(model_py, "model.py", "exec")  # the patch it carries is valid Python
    assert bench_multi30k.variant_of("opennmt_tf", args) == (
        "default" if batching == "default" else "peer_batching=t2t")
    assert bench_multi30k.variant_of("t2t", args) == "default"


def test_the_peer_batching_ablation_refuses_eole(capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench_multi30k.parse_args(["--learning_rate=1.5", "--warmup_steps=300",
                                   "--peer_batching=t2t"])
    assert exit_info.value.code == 2
    assert ("--peer_batching=t2t changes OpenNMT-tf's input only; give --systems=opennmt_tf"
            in capsys.readouterr().err)


multi30k_batches = pytest.importorskip("multi30k_batches")


def test_the_batch_summary_counts_passes_and_the_flush_of_part_filled_buckets():
    rows = [[100, 40, 40, 3800, 3900], [100, 40, 40, 3700, 3800],  # two full batches
            [233, 8, 8, 1718, 1777], [1, 4, 4, 4, 4]]                # a pass's flush
    summary = multi30k_batches.batch_summary(rows, 4096, 217)
    assert summary == {"batches": 4, "passes": 2.0, "small_batches": 2,
                       "small_batch_steps": [3, 4], "single_sentence_batches": 1,
                       "target_tokens_mean": 2370, "target_tokens_min": 4,
                       "target_tokens_total": 9481}
    # A batch is small by OpenNMT-tf's own count: examples x the longer padded side.
    assert multi30k_batches.batch_summary([[60, 20, 40, 1100, 1900]], 4096, 60)[
        "small_batches"] == 0


def test_each_scripts_own_flags_are_checked_first_and_set_beside_the_bench_flags(capsys):
    # The own check runs before bench_multi30k's parse, so its message wins over the
    # bench's error about the same bad run (no schedule lookup, nothing imported).
    with pytest.raises(SystemExit, match="multi30k_batches: --batches=0: give a positive"):
        multi30k_batches.parse_args(["--batches=0", "--systems=nope"])
    with pytest.raises(SystemExit, match="--learning_rates=x --warmups=300,600: give numbers"):
        multi30k_sweep.parse_args(["--learning_rates=x", "--systems=nope"])
    args = multi30k_long.parse_args(["--patience=5", "--learning_rate=1.5",
                                     "--warmup_steps=300", "--out="])
    assert (args.patience, args.systems, args.plot, args.out) == (5, ["t2t"], "", "")
    with pytest.raises(SystemExit) as exit_info:
        multi30k_batches.parse_args(["--help"])
    assert exit_info.value.code == 0
    shown = capsys.readouterr().out
    assert "--batches" in shown and "--peer_batching" in shown
    assert "and bench_multi30k.py's flags (--work_dir, --venv_dir, --out, ...):" in shown

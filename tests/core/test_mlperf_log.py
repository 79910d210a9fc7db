"""mlperf_log: MLPerf compliance lines only when the hparams ask (`mlperf_mode`)."""
import logging
import re

import pytest

from t2t.core import mlperf_log
from t2t.core.hparam import HParams


def _print_from_a_helper(**kwargs):
    return mlperf_log.transformer_print(**kwargs)  # the line names this helper's caller


def test_quiet_without_mlperf_mode(caplog):
    with caplog.at_level(logging.DEBUG, logger="mlperf_compliance"):
        assert mlperf_log.transformer_print(mlperf_log.RUN_START) is None
        assert mlperf_log.transformer_print(mlperf_log.RUN_START,
                                            hparams=HParams(mlperf_mode=False)) is None
        assert mlperf_log.transformer_print("not_a_tag", hparams=HParams(dropout=0.1)) is None
    assert caplog.records == []


@pytest.fixture
def forget_the_file():
    yield
    for handler in mlperf_log._file_handler:  # pylint: disable=protected-access
        mlperf_log.LOGGER.removeHandler(handler)
        handler.close()
    mlperf_log._file_handler.clear()  # pylint: disable=protected-access


def test_lines_levels_deferred_values_and_bad_keys(caplog, tmp_path, monkeypatch,
                                                  forget_the_file):
    hp = HParams(mlperf_mode=True)
    monkeypatch.setenv("COMPLIANCE_FILE", str(tmp_path / "compliance.log"))
    with caplog.at_level(logging.DEBUG, logger="mlperf_compliance"):
        assert _print_from_a_helper(key=mlperf_log.OPT_LR, value=0.2, hparams=hp) is None
        deferred = mlperf_log.transformer_print(mlperf_log.EVAL_ACCURACY, deferred=True,
                                                hparams=hp, stack_offset=1)
    opt, acc = caplog.records
    assert re.fullmatch(r":::MLPv0\.5\.0 transformer \d+\.\d{9} \(.*test_mlperf_log\.py:\d+\) "
                        r"opt_learning_rate: 0\.2", opt.getMessage())
    assert ":%d)" % (_line_of("_print_from_a_helper(key")) in opt.getMessage()
    assert opt.levelno == logging.DEBUG and acc.levelno == logging.INFO  # eval tags: stdout
    assert acc.getMessage().endswith('eval_accuracy: "DEFERRED: %s"' % deferred)
    assert len((tmp_path / "compliance.log").read_text().splitlines()) == 2
    with pytest.raises(ValueError, match="Invalid key for MLPerf print: eval_acc"):
        mlperf_log.transformer_print("eval_acc", hparams=hp)
    with pytest.raises(ValueError, match="deferred"):
        mlperf_log.transformer_print(mlperf_log.OPT_LR, 1, deferred=True, hparams=hp)


def _line_of(text):
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if text in line and "_line_of" not in line)

"""T2T 1.15.7's `dialog_dailydialog`: the DailyDialog corpus as a chatbot problem.

`dialog_dailydialog16k` (a 2**14-word vocabulary) downloads `ijcnlp_dailydialog.zip`
(yanran.li) into `tmp_dir`; its `ijcnlp_dailydialog/dialogues_text.txt` holds a dialog a
line, the utterances each ended by `__eou__`. Utterance i is a source, utterance i + 1 its
target; the dialog acts, emotions and topics are not used:

    t2t-datagen --problem=dialog_dailydialog16k --data_dir=... --tmp_dir=...
    # "Hi ! __eou__ Hello . __eou__" -> trainSource.txt "hi ! ", trainTarget.txt "hello . "
"""
import os

from t2t.core import registry
from t2t.problems import dialog_abstract

EOS = dialog_abstract.EOS
_EOU = "__eou__"


@registry.register_problem
class DialogDailydialog16k(dialog_abstract.DialogAbstract):
    """The chatbot problem over DailyDialog (https://arxiv.org/abs/1710.03957)."""

    URL = "http://yanran.li/files/ijcnlp_dailydialog.zip"
    ZIPPED_DATA = "ijcnlp_dailydialog.zip"
    RAW_DATA = "ijcnlp_dailydialog"

    def dialogs(self, raw_data):
        path = os.path.join(raw_data, "dialogues_text.txt")
        with open(path, encoding="utf-8", errors="ignore") as handle:
            for line in handle:
                utterances = [self.clean_line(utterance.lower())
                              for utterance in line.split(_EOU)[:-1]]
                yield dialog_abstract.consecutive_pairs(utterances), utterances

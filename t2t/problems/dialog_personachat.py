"""T2T 1.15.7's `dialog_personachat`: Persona-Chat (ConvAI2) dialogs as a chatbot problem.

`dialog_personachat16k` (a 2**14-word vocabulary) downloads parl.ai's
`convai2_fix_723.tgz` into `tmp_dir` as `convai2.tar.gz` and extracts it into
`tmp_dir/ConvAI2/`; the dialogs are those of `train_none_original_no_cands.txt` then
`valid_none_original_no_cands.txt`, a turn a line (`<n> <utterance><TAB><reply>`, `n`
starting at 1 in each dialog). The personas are not used, and from a turn holding
`__SILENCE__` to the dialog's end a dialog is cut off, as T2T's:

    t2t-datagen --problem=dialog_personachat16k --data_dir=... --tmp_dir=...
    # "1 hi !\thello .\n2 how are you ?\tfine .\n" -> pairs (hi, hello), (hello, how are you) ...
"""
import os

from t2t.core import errors
from t2t.core import registry
from t2t.problems import dialog_abstract

EOS = dialog_abstract.EOS
_FILES = ("train_none_original_no_cands.txt", "valid_none_original_no_cands.txt")
_SILENCE = "__SILENCE__"


@registry.register_problem
class DialogPersonachat16k(dialog_abstract.DialogAbstract):
    """The chatbot problem over the original Persona-Chat dialogs (no personas).

    https://github.com/facebookresearch/ParlAI/tree/master/projects/personachat
    """

    URL = "http://parl.ai/downloads/convai2/convai2_fix_723.tgz"
    ZIPPED_DATA = "convai2.tar.gz"
    RAW_DATA = "ConvAI2"

    def extract_dir(self, tmp_dir):
        # The archive's files are at its top: T2T extracted it into ConvAI2/.
        return os.path.join(self.raw_data_dir(tmp_dir), self.RAW_DATA)

    def raw_data(self, tmp_dir):
        return self.extract_dir(tmp_dir)

    def _turns(self, raw_data):
        for name in _FILES:
            path = os.path.join(raw_data, name)
            with open(path, encoding="utf-8", errors="ignore") as handle:
                for lineno, line in enumerate(handle, 1):
                    if not line.strip():
                        continue
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) < 2:
                        raise errors.UserError("%s line %d has no tab between utterance and "
                                               "reply; give ConvAI2's own file" % (path, lineno))
                    yield line.split()[0], line, parts

    def dialogs(self, raw_data):
        utterances, silenced = [], False
        for dialog_id, line, parts in self._turns(raw_data):
            if dialog_id == "1" and utterances:
                yield dialog_abstract.consecutive_pairs(utterances), utterances
                utterances = []
            if _SILENCE in line or (silenced and dialog_id != "1"):
                silenced = True
                continue
            silenced = False
            source = " ".join(parts[0].split()[1:])
            utterances += [self.clean_line(source.lower()), self.clean_line(parts[1].lower())]
        if utterances:
            yield dialog_abstract.consecutive_pairs(utterances), utterances

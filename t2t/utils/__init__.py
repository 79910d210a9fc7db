"""T2T's `tensor2tensor.utils` module paths, kept so ported code runs unchanged.

Each module here is a re-export of the module's real home in a concept package
(`t2t.utils.registry` is `t2t.core.registry`, `t2t.utils.trainer_lib` is
`t2t.training.trainer_lib`, ...); see docs/architecture.md. Nothing inside t2t imports
from here.
"""

"""MkDocs hooks for t2t's site (mkdocs.yml: `hooks:`).

Benchmark figures are written by the benchmarks into bench/results/, outside docs/; the
site serves them under the same path, so docs/benchmarks.md shows
`bench/results/multi30k.png` without a copy of it in docs/ going stale.
"""
import os

from mkdocs.structure.files import File

# Files outside docs/ that pages show, by their path from the repository root.
REPOSITORY_FILES = ("bench/results/multi30k.png", "bench/results/serving.png")


def on_files(files, config):
    root = os.path.dirname(os.path.abspath(config.config_file_path))
    for path in REPOSITORY_FILES:
        files.append(File.generated(config, path, abs_src_path=os.path.join(root, path)))
    return files

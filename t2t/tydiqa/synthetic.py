"""TyDi QA-format files for tests, benchmarks and smoke runs: written in the released schema.

    lines = learnable_examples(200, seed=1)          # dicts in the released schema
    write_jsonl_gz("/tmp/tydi/tydiqa-v1.0-train.jsonl.gz", lines)

`learnable_examples` makes a task a tiny model can learn: each document is a few
passages of words of one language (Arabic, Bengali, Japanese, Korean, Russian, Telugu,
Thai), the question is one word of the document and the minimal answer is the word right
after it. A tenth of the questions name a word that is not in the document (no answer).
Every annotator (`annotators`, 3 for a dev set) gives the same answer.

`write_sample` puts a train and a dev file under the released names in a folder, so that
the TyDi QA problems run offline (`t2t-tydi-synthetic --tmp_dir=~/tydi_sample`):

    write_sample("/tmp/tydi_sample")
    # ("/tmp/tydi_sample/tydiqa-v1.0-train.jsonl.gz", ".../tydiqa-v1.0-dev.jsonl.gz")
"""
import gzip
import json
import os
import random

from t2t.core import atomic_files

# Syllables per script; words are 2-3 syllables, so all characters are multi-byte.
SCRIPTS = {
    "arabic": "بتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "bengali": ["কা", "খি", "গু", "ঘে", "চো", "জা", "টি", "ডু", "তে", "দো", "না", "পি", "বু",
                "মে", "রো", "লা", "শি", "সু", "হে"],
    "japanese": "あいうえおかきくけこさしすせそたちつてとなにぬねの東京山川田中日本語",
    "korean": "가나다라마바사아자차카타파하서울부산대구",
    "russian": ["ма", "ко", "ре", "ли", "ну", "до", "ся", "ты", "вы", "жи", "ша", "зо", "пе"],
    "telugu": ["కా", "గి", "చు", "జె", "టొ", "డా", "తి", "దు", "నె", "పొ", "మా", "రి", "లు"],
    "thai": ["กา", "ขี", "คู", "งะ", "จอ", "ฉิ", "ชู", "ดา", "ตี", "นู", "บา", "ปี", "มา"],
}


def example_dict(example_id, language, question, document, candidates, annotations=(),
                 title="", url=""):
    """A released-schema dict. `candidates`: [(start byte, end byte)]; `annotations`:
    [(candidate index, minimal start byte, minimal end byte, yes_no)] with -1 for none."""
    return {
        "example_id": int(example_id),
        "language": language,
        "question_text": question,
        "document_title": title,
        "document_url": url or "https://example.org/%d" % example_id,
        "document_plaintext": document,
        "document_html": "",
        "passage_answer_candidates": [
            {"plaintext_start_byte": s, "plaintext_end_byte": e, "html_start_byte": -1,
             "html_end_byte": -1} for s, e in candidates],
        "annotations": [
            {"annotation_id": 1000 * int(example_id) + i,
             "passage_answer": {"candidate_index": index},
             "minimal_answer": {"plaintext_start_byte": start, "plaintext_end_byte": end,
                                "html_start_byte": -1, "html_end_byte": -1},
             "yes_no_answer": yes_no}
            for i, (index, start, end, yes_no) in enumerate(annotations)],
    }


def write_jsonl_gz(path, lines):
    """Write dicts as gzipped JSON lines, atomically and byte-identically (mtime 0)."""
    with atomic_files.atomic_write(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as handle:
            for line in lines:
                handle.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
    return path


def _words(language, count, rng):
    syllables = list(SCRIPTS[language])
    words = set()
    while len(words) < count:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    return sorted(words)


def learnable_examples(num_examples, seed=0, num_passages=3, words_per_passage=8,
                       words_per_language=40, annotators=1, unanswerable=0.1,
                       first_id=-(2 ** 62), answer_offset=1):
    """`num_examples` released-schema dicts of the "word after the question word" task.

    `answer_offset` 0 makes the answer the question word itself (an easier task).

    Example ids start at `first_id` (a large negative 64-bit number, as in TyDi QA) and
    step by a large odd stride, so they exercise 64-bit handling.
    """
    rng = random.Random(seed)
    languages = sorted(SCRIPTS)
    vocab = {language: _words(language, words_per_language, random.Random(language))
             for language in languages}
    lines = []
    for number in range(num_examples):
        language = languages[number % len(languages)]
        words = rng.sample(vocab[language], num_passages * words_per_passage + 1)
        spare, words = words[-1], words[:-1]
        passages = [words[i * words_per_passage:(i + 1) * words_per_passage]
                    for i in range(num_passages)]
        document, candidates, positions = "", [], {}
        for index, passage in enumerate(passages):
            start = len(document.encode("utf-8"))
            for offset, word in enumerate(passage):
                if offset:
                    document += " "
                positions[(index, offset)] = len(document.encode("utf-8"))
                document += word
            candidates.append((start, len(document.encode("utf-8"))))
            document += "\n"
        if rng.random() < unanswerable:
            question, annotation = spare, (-1, -1, -1, "NONE")
        else:
            index = rng.randrange(num_passages)
            offset = rng.randrange(words_per_passage - answer_offset)
            question = passages[index][offset]
            answer = passages[index][offset + answer_offset]
            start = positions[(index, offset + answer_offset)]
            annotation = (index, start, start + len(answer.encode("utf-8")), "NONE")
        lines.append(example_dict(first_id + number * 1000003, language, question, document,
                                  candidates, [annotation] * annotators,
                                  title="doc %d" % number))
    return lines


TRAIN_FILENAME = "tydiqa-v1.0-train.jsonl.gz"
DEV_FILENAME = "tydiqa-v1.0-dev.jsonl.gz"


def write_sample(folder, num_train=1400, num_dev=140, seed=1):
    """A learnable train set and a dev set (3 annotators, other ids) under the released
    file names in `folder`: what `t2t-datagen --problem=tydiqa_codepoints --tmp_dir=folder`
    reads. Returns (train path, dev path); the same arguments give the same bytes."""
    atomic_files.make_dirs(folder)
    train = write_jsonl_gz(os.path.join(folder, TRAIN_FILENAME),
                           learnable_examples(num_train, seed=seed))
    dev = write_jsonl_gz(os.path.join(folder, DEV_FILENAME),
                         learnable_examples(num_dev, seed=seed + 1, annotators=3,
                                            first_id=2 ** 62))
    return train, dev

"""t2t.tydiqa data, preprocess, tokenizers, windows and pipeline on multilingual data."""
import gzip
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.tydiqa import data, pipeline, preprocess, tokenizers, windows
from t2t.tydiqa.data import AnswerType

import tydiqa_testing

SMALL = windows.WindowConfig(max_seq_length=48, doc_stride=6, max_question_length=8,
                             include_unknowns=0.5)


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tydi") / "train.jsonl.gz"
    return tydiqa_testing.write_jsonl_gz(str(path), tydiqa_testing.multilingual_lines())


@pytest.fixture(scope="module")
def subword_spec(tmp_path_factory, train_file):
    texts = [t for line in tydiqa_testing.multilingual_lines()
             for t in (line["question_text"], line["document_plaintext"])]
    vocab = str(tmp_path_factory.mktemp("vocab") / "vocab.subwords")
    tokenizers.build_subword_encoder(texts, 300, 45).store_to_file(vocab)
    return tokenizers.TokenizerSpec("subwords", vocab, 45)


def documents():
    return {line["example_id"]: line["document_plaintext"].encode("utf-8")
            for line in tydiqa_testing.multilingual_lines()}


def test_window_spans_advance_by_stride_until_the_end():
    assert windows.window_spans(3000, 2048, 512) == [(0, 2048), (512, 2048), (1024, 1976)]
    assert windows.window_spans(10, 4, 3) == [(0, 4), (3, 4), (6, 4)]
    assert windows.window_spans(4, 10, 3) == [(0, 4)]
    assert windows.window_spans(0, 10, 3) == []


def test_question_keeps_q_and_its_last_tokens():
    tok = tokenizers.CodepointTokenizer()
    assert windows.question_ids(tok, "abcdef", 4) == [tok.q_id] + [ord(c) for c in "def"]
    assert windows.question_ids(tok, "ab", 4) == [tok.q_id, ord("a"), ord("b")]
    assert windows.question_ids(tok, "ab", 1) == [tok.q_id]


def test_config_is_validated():
    with pytest.raises(ValueError, match="max_seq_length=10 leaves no room"):
        windows.WindowConfig(max_seq_length=10, max_question_length=8)
    with pytest.raises(ValueError, match="doc_stride=0"):
        windows.WindowConfig(doc_stride=0)


def test_context_markers_and_byte_map():
    line = tydiqa_testing.multilingual_lines()[0]   # arabic, text outside the candidates
    example = data.parse_example(line)
    entry = preprocess.prepare_example(example, max_passages=45)
    context = entry.context
    assert context.text.startswith("\ue006 ") and " \ue007 " in context.text
    mapped = context.byte_map >= 0
    doc = np.frombuffer(example.document, dtype=np.uint8)
    ctx = np.frombuffer(context.data, dtype=np.uint8)
    assert (ctx[mapped] == doc[context.byte_map[mapped]]).all()
    assert mapped.sum() == sum(c.end_byte - c.start_byte for c in example.candidates)
    start, end = entry.answer_context_span
    assert context.data[start:end].decode() == "القاهرة"
    assert entry.answer.type == AnswerType.MINIMAL and entry.answer.candidate_index == 1
    # max_passages keeps only the first candidates (and drops an answer beyond them).
    first_only = preprocess.prepare_example(example, max_passages=1)
    assert len(first_only.context.pieces) == 1
    assert first_only.answer.type == AnswerType.UNKNOWN


def test_answer_selection_and_types():
    lines = tydiqa_testing.multilingual_lines()
    expected = tydiqa_testing.EXPECTED
    for line in lines:
        example = data.parse_example(line)
        kind, text = expected[example.example_id]
        if kind == "SKIPPED":
            with pytest.raises(preprocess.SkipExample) as skip:
                preprocess.prepare_example(example, 45)
            assert skip.value.reason == "minimal_answer_mismatch"
            continue
        entry = preprocess.prepare_example(example, 45)
        assert entry.answer.type.name == kind   # YES stays YES (the reference made it PASSAGE)
        if text is not None:
            answer = entry.answer
            assert data.byte_slice(example.document, answer.start_byte,
                                   answer.end_byte) == text


def _check_labels(features, decode_ids=None):
    docs = documents()
    seen = set()
    for window in features:
        example_id = int(window["example_id"][0])
        kind, text = tydiqa_testing.EXPECTED[example_id]
        answer_type = AnswerType(int(window["answer_type"][0]))
        start, end = int(window["start_position"][0]), int(window["end_position"][0])
        if answer_type == AnswerType.UNKNOWN:
            assert (start, end) == (0, 0)
            continue
        assert answer_type.name == kind
        assert window["segment_ids"][start] == 1 and window["segment_ids"][end] == 1
        if "byte_start" in window:
            span = docs[example_id][window["byte_start"][start]:window["byte_end"][end]]
            assert span.decode("utf-8") == text
        if decode_ids is not None:
            assert decode_ids(window["inputs"][start:end + 1]) == text
        seen.add(example_id)
    return seen


@pytest.mark.parametrize("training", [False, True])
def test_codepoint_labels_map_back_to_the_exact_answer_bytes(train_file, training):
    spec = pipeline.PipelineSpec(tokenizers.TokenizerSpec("codepoints"), SMALL, 45,
                                 training=training, seed=3)
    features, summary, examples = pipeline.run(train_file, spec)
    seen = _check_labels(features, lambda ids: "".join(map(chr, ids)))
    answered = {i for i, (kind, _) in tydiqa_testing.EXPECTED.items()
                if kind not in ("UNKNOWN", "SKIPPED")}
    assert seen == answered
    assert summary.examples == 11 and dict(summary.skipped) == {"minimal_answer_mismatch": 1}
    assert summary.used == (10 if not training else summary.used)
    assert summary.windows == len(features)
    assert [e.example_index for e in examples] == list(range(11))
    assert examples[-1].skipped == "minimal_answer_mismatch" and examples[-1].num_windows == 0
    for window in features:
        assert len(window["inputs"]) == 48
        used = int(window["input_mask"].sum())
        assert window["inputs"][0] == data.CLS_CODEPOINT
        assert window["inputs"][1] == data.Q_CODEPOINT
        assert window["inputs"][used - 1] == data.SEP_CODEPOINT
        assert (window["inputs"][used:] == 0).all()
        assert ("byte_start" in window) == (not training)


def test_subword_labels_map_back_to_the_exact_answer_bytes(train_file, subword_spec):
    tok = subword_spec.build()
    spec = pipeline.PipelineSpec(subword_spec, SMALL, 45, training=False, seed=3)
    features, summary, _ = pipeline.run(train_file, spec)
    seen = _check_labels(features, lambda ids: tok.encoder.decode(list(ids)))
    assert len(seen) == 9 and summary.skipped["minimal_answer_mismatch"] == 1
    window = features[0]
    assert window["inputs"][0] == tok.cls_id and window["inputs"][1] == tok.q_id
    assert tok.marker_id(0) in window["inputs"].tolist()


def test_training_sampling_is_seeded_and_process_count_free(train_file):
    def run(seed, processes, include_unknowns=0.5):
        config = windows.WindowConfig(48, 6, 8, include_unknowns)
        spec = pipeline.PipelineSpec(tokenizers.TokenizerSpec("codepoints"), config, 45,
                                     training=True, seed=seed)
        features, summary, _ = pipeline.run(train_file, spec, num_processes=processes)
        return [{k: v.tolist() for k, v in f.items()} for f in features], summary

    one, _ = run(7, 1)
    two, _ = run(7, 2)
    assert one == two
    never, summary = run(7, 1, include_unknowns=-1)
    assert summary.answer_types["UNKNOWN"] == 0
    always, summary = run(7, 1, include_unknowns=1.0)
    total_windows = sum(1 for _ in pipeline.run(train_file, pipeline.PipelineSpec(
        tokenizers.TokenizerSpec("codepoints"), SMALL, 45, training=False))[0])
    assert len(never) < len(one) < len(always) == total_windows


def test_format_errors_name_the_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl.gz"
    line = tydiqa_testing.multilingual_lines()[0]
    del line["question_text"]
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps(line) + "\n")
    with pytest.raises(data.TydiFormatError, match=r"bad.jsonl.gz:1 \(example_id "
                       r"-8000000000000000001\): missing field 'question_text'"):
        list(data.read_examples(str(path)))
    with pytest.raises(data.TydiFormatError, match="unknown TyDi QA language 'klingon'"):
        data.parse_example(dict(tydiqa_testing.multilingual_lines()[0], language="klingon"))


_TEXT = st.text(st.sampled_from(list("ab1 ,.\n_\\é") + ["ไ", "ท", "ย", "東", "京", "「",
                                                        "」", "😀", "\u0301"]), max_size=30)


@settings(max_examples=60, deadline=None)
@given(_TEXT)
def test_codepoint_positions_are_the_characters(text):
    example = data.TydiExample(1, "thai", "q", ("x" + text).encode(), (data.Candidate(
        1, 1 + len(text.encode())),) if text else ())
    context = preprocess.build_context(example, 45)
    positions = tokenizers.CodepointTokenizer().tokenize_context(context)
    chars = [chr(i) for i in positions.ids]
    assert "".join(chars) == context.text
    for char, start, end in zip(chars[2:], positions.document_start[2:],
                                positions.document_end[2:]):
        assert example.document[start:end].decode() == char


_VOCAB = tokenizers.build_subword_encoder(["ab 1, é ไทย 東京「」ab ab 11"], 40, 3)


@settings(max_examples=60, deadline=None)
@given(_TEXT)
def test_subword_positions_cover_their_characters(text):
    tok = tokenizers.SubwordTokenizer(_VOCAB, 3)
    ids, starts, ends = tok.tokenize_text(text)
    data_bytes = text.encode()
    assert ids == tok.encode(text)
    previous_start = 0
    for start, end in zip(starts, ends):
        if start < 0:
            assert end == -1
            continue
        assert 0 <= start < end <= len(data_bytes)
        assert data.is_char_boundary(data_bytes, start) and data.is_char_boundary(
            data_bytes, end)
        assert start >= previous_start  # two subwords may share one escaped character
        previous_start = start
    # Every byte but whitespace belongs to a position.
    covered = np.zeros(len(data_bytes), dtype=bool)
    for start, end in zip(starts, ends):
        if start >= 0:
            covered[start:end] = True
    uncovered = {data_bytes[i:i + 1] for i in np.nonzero(~covered)[0]}
    assert uncovered <= {b" ", b"\n"}


def test_subword_spans_leave_out_edge_whitespace():
    # T2T's tokenizer makes a vowel sign and the following space one token ("\u0c3f ").
    text = "పొరి టా"
    tok = tokenizers.SubwordTokenizer(tokenizers.build_subword_encoder([text], 30, 1), 1)
    _, starts, ends = tok.tokenize_text(text)
    data_bytes = text.encode()
    assert b" " not in b"".join(data_bytes[s:e] for s, e in zip(starts, ends) if s >= 0)
    assert max(ends) == len(data_bytes) and min(s for s in starts if s >= 0) == 0


def test_serialized_windows_from_two_workers_equal_the_features(train_file):
    import tensorflow as tf

    spec = pipeline.PipelineSpec(tokenizers.TokenizerSpec("codepoints"), SMALL, 45,
                                 training=False, seed=3)
    features, summary, _ = pipeline.run(train_file, spec)
    stream = pipeline.FeatureStream(train_file, spec, num_processes=2, serialize=True)
    serialized = list(stream)
    assert len(serialized) == len(features)
    assert stream.summary.as_dict() == summary.as_dict()
    for data_bytes, window in zip(serialized, features):
        parsed = tf.train.Example.FromString(data_bytes).features.feature
        assert {k: list(v.int64_list.value) for k, v in parsed.items()} == \
            {k: v.tolist() for k, v in window.items()}

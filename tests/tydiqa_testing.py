"""TyDi QA test data in the released schema: seven scripts, every answer boundary next to
multi-byte characters, a passage-only answer, a YES answer, an unanswerable question and a
span that does not match its document.

    lines = multilingual_lines(annotators=1)
    write_jsonl_gz(tmp_path / "tydiqa-v1.0-train.jsonl.gz", lines)
    EXPECTED[lines[0]["example_id"]]   # ("MINIMAL", "القاهرة")
"""
from t2t.tydiqa.synthetic import example_dict, write_jsonl_gz  # noqa: F401 (re-exported)


def _document(parts):
    """parts: strings, or ("A", text) for the answer, ("P", [...]) for a candidate passage.

    Returns (document, candidates [(s, e)], answer (s, e) or None), in bytes.
    """
    document = b""
    candidates, answer = [], None
    for part in parts:
        if isinstance(part, tuple) and part[0] == "P":
            start = len(document)
            for inner in part[1]:
                if isinstance(inner, tuple):
                    answer = (len(document), len(document) + len(inner[1].encode()))
                    document += inner[1].encode()
                else:
                    document += inner.encode()
            candidates.append((start, len(document)))
        else:
            document += part.encode()
    return document.decode(), candidates, answer


# (id, language, question, parts, kind) with kind MINIMAL / PASSAGE:i / YES / NONE / BAD
_CASES = [
    (-8000000000000000001, "arabic", "ما هي عاصمة مصر؟",
     ["مصر\n", ("P", ["مصر دولة عربية كبيرة."]), "\n",
      ("P", ["عاصمة مصر هي «", ("A", "القاهرة"), "» الكبرى."])], "MINIMAL"),
    (7300000000000000002, "bengali", "বাংলাদেশের রাজধানী কোথায়?",
     [("P", ["বাংলাদেশের রাজধানী “", ("A", "ঢাকা"), "” শহর।"])], "MINIMAL"),
    (-6100000000000000003, "japanese", "日本の首都はどこですか",
     ["日本\n", ("P", ["日本の首都は「", ("A", "東京"), "」です。"]), "\n",
      ("P", ["人口は多い。"])], "MINIMAL"),
    (5200000000000000004, "korean", "한국의 수도는 어디입니까?",
     [("P", ["한국은 아시아에 있다."]), " ", ("P", ["한국의 수도는 «", ("A", "서울"), "»이다."])],
     "MINIMAL"),
    (-4400000000000000005, "russian", "Какая столица России?",
     [("P", ["Столица России — «", ("A", "Москва"), "», город."])], "MINIMAL"),
    (3900000000000000006, "telugu", "తెలంగాణ రాజధాని ఏది?",
     [("P", ["తెలంగాణ రాజధాని “", ("A", "హైదరాబాదు"), "” నగరం."])], "MINIMAL"),
    (-2800000000000000007, "thai", "เมืองหลวงของไทยคืออะไร",
     ["ไทย\n", ("P", ["เมืองหลวงของไทยคือ “", ("A", "กรุงเทพ"), "” ครับ"])], "MINIMAL"),
    (1700000000000000008, "russian", "Где живут медведи?",
     [("P", ["Медведь — зверь."]), "\n", ("P", ["Медведи живут в лесу и в горах."])],
     "PASSAGE:1"),
    (-1600000000000000009, "japanese", "富士山は日本一高い山ですか",
     [("P", ["富士山は日本で一番高い山です。"])], "YES"),
    (1500000000000000010, "korean", "달에는 누가 사나요?",
     [("P", ["달은 지구의 위성이다."])], "NONE"),
    (-1400000000000000011, "thai", "ช้างอยู่ที่ไหน",
     [("P", ["ช้างอยู่ใน “", ("A", "ป่า"), "” ใหญ่"])], "BAD"),
]

# example_id -> (expected answer type name or "SKIPPED", answer text or None)
EXPECTED = {}


def multilingual_lines(annotators=1):
    """The cases above as released-schema dicts (`annotators` identical annotations)."""
    lines = []
    for example_id, language, question, parts, kind in _CASES:
        document, candidates, answer = _document(parts)
        if kind == "MINIMAL":
            index = next(i for i, (s, e) in enumerate(candidates) if s <= answer[0] < e)
            annotation = (index, answer[0], answer[1], "NONE")
            text = document.encode()[answer[0]:answer[1]].decode()
            EXPECTED[example_id] = ("MINIMAL", text)
        elif kind.startswith("PASSAGE"):
            index = int(kind.split(":")[1])
            annotation = (index, -1, -1, "NONE")
            s, e = candidates[index]
            EXPECTED[example_id] = ("PASSAGE", document.encode()[s:e].decode())
        elif kind == "YES":
            annotation = (0, -1, -1, "YES")
            s, e = candidates[0]
            EXPECTED[example_id] = ("YES", document.encode()[s:e].decode())
        elif kind == "NONE":
            annotation = (-1, -1, -1, "NONE")
            EXPECTED[example_id] = ("UNKNOWN", None)
        else:  # BAD: the span starts inside a multi-byte character
            index = next(i for i, (s, e) in enumerate(candidates) if s <= answer[0] < e)
            annotation = (index, answer[0] + 1, answer[1], "NONE")
            EXPECTED[example_id] = ("SKIPPED", None)
        lines.append(example_dict(example_id, language, question, document, candidates,
                                  [annotation] * annotators, title=language))
    return lines

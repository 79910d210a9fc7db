"""t2t-serve on the CTranslate2 engine: the tiny trained model's CTranslate2 conversion served
on 127.0.0.1 answers what t2t.load(..., engine="ctranslate2").decode answers."""
import concurrent.futures

import pytest

pytest.importorskip("ctranslate2")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import t2t  # noqa: E402
from t2t.server import ServerConfig  # noqa: E402

from decoding_testing import copy_as_training_folder, trained_model  # noqa: E402
from serve_testing import metric, running_server, wait_ready  # noqa: E402

WORDS = ["ab", "dcbad", "c", "bbb", "cabd", "dada", "a", "ddcb"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    trained = trained_model(tmp_path_factory)
    folder = copy_as_training_folder(trained, str(tmp_path_factory.mktemp("serve_ct2") /
                                                  "train"))
    reference = t2t.load(folder, engine="ctranslate2")  # converts once, into the folder

    def load():
        return t2t.load(folder, engine="ctranslate2")

    with reference, running_server({"low-up": load},
                                   ServerConfig(max_batch_size=4, max_wait_ms=50)) as (url, _):
        wait_ready(url)
        yield url, reference


def test_ctranslate2_translations_are_t2t_loads_decodes(served):
    url, reference = served
    assert httpx.get(url + "/v1/models").json()["models"][0]["engine"] == "ctranslate2"
    with concurrent.futures.ThreadPoolExecutor(len(WORDS)) as pool:
        answers = list(pool.map(lambda w: httpx.post(url + "/v1/translate", json={
            "inputs": w, "beam_size": 2, "return_scores": True}, timeout=60), WORDS))
    expected = reference.decode(WORDS, beam_size=2, nbest=1)
    assert [a.json()["outputs"] for a in answers] == [h[0].text for h in expected]
    assert [a.json()["scores"] for a in answers] == [
        pytest.approx(h[0].score, abs=1e-4) for h in expected]
    refused = httpx.post(url + "/v1/translate", json={"inputs": "ab",
                                                      "stopping_bound": "current_length"})
    assert refused.status_code == 400 and refused.json()["error"].startswith(
        "stopping_bound='current_length' is for the TensorFlow engines")
    libre = httpx.post(url + "/translate", data={"q": "ab\ndcba", "source": "low",
                                                 "target": "up"}).json()
    assert libre == {"translatedText": "\n".join(reference.decode(["ab", "dcba"]))}
    text = httpx.get(url + "/metrics").text
    assert metric(text, "t2t_serve_batch_size_sum", model="low-up") == len(WORDS) + 2
    assert metric(text, "t2t_serve_batch_size_count", model="low-up") < len(WORDS) + 1

"""t2t-serve on the TensorFlow engine: a real server on 127.0.0.1 (uvicorn in a thread) with the
tiny trained model, its answers against t2t.load(...).decode, batching, queues, limits, keys.

One server for the module; its engine is wrapped (serve_testing.GatedEngine) so a test can
hold batches to fill the queue, or make the engine fail (the last test).
"""
import concurrent.futures
import shutil
import subprocess

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
httpx = pytest.importorskip("httpx")

import t2t  # noqa: E402
from t2t.core.progress import Progress  # noqa: E402
from t2t.server import ServerConfig, access  # noqa: E402

from decoding_testing import copy_as_training_folder, trained_model  # noqa: E402
from serve_testing import (GatedEngine, metric, running_server, wait_for,  # noqa: E402
                           wait_ready)

WORDS = ["ab", "dcbad", "c", "bbb", "cabd", "dada", "a", "ddcb", "bcd", "dab", "cc", "abcd"]
NAME = "low-up"  # a SRC-TGT name: LibreTranslate's source=low&target=up
CONFIG = dict(max_batch_size=8, max_wait_ms=20, max_queue=40, max_texts=32, max_chars=400,
              request_timeout=60)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    trained = trained_model(tmp_path_factory)
    return copy_as_training_folder(trained, str(tmp_path_factory.mktemp("serve") / "train"))


@pytest.fixture(scope="module")
def reference(folder):
    with t2t.load(folder) as model:
        yield model


@pytest.fixture(scope="module")
def server(folder):
    engines = []

    def load():
        model = t2t.load(folder)
        model.decode(["ab"])  # build the graphs the tests use before serving
        model.decode(["ab"], nbest=2)
        model.engine = GatedEngine(model.engine)
        engines.append(model.engine)
        return model

    with running_server({NAME: load}, ServerConfig(**CONFIG)) as (url, service):
        wait_ready(url)
        yield {"url": url, "service": service, "engine": engines[0]}


def post(server, path, json=None, **kw):
    return httpx.post(server["url"] + path, json=json, timeout=60, **kw)


def metrics_text(server):
    return httpx.get(server["url"] + "/metrics").text


def test_translations_are_t2t_loads_decodes(server, reference):
    answer = post(server, "/v1/translate", {"inputs": WORDS})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"model": NAME, "outputs": reference.decode(WORDS)}
    one = post(server, "/v1/translate", {"inputs": "dcba", "model": NAME}).json()
    assert one["outputs"] == reference.decode("dcba")
    nbest = post(server, "/v1/translate", {"inputs": WORDS[:4], "nbest": 2,
                                           "return_scores": True}).json()
    expected = reference.decode(WORDS[:4], nbest=2)
    assert nbest["outputs"] == [[h.text for h in hs] for hs in expected]
    assert nbest["scores"] == [[pytest.approx(h.score, abs=1e-4) for h in hs]
                               for hs in expected]
    sooner = post(server, "/v1/translate", {"inputs": WORDS, "beam_size": 3,
                                            "stopping_bound": "current_length"})
    assert sooner.json()["outputs"] == reference.decode(WORDS, beam_size=3,
                                                        stopping_bound="current_length")


def test_lines_whitespace_and_long_lines(server, reference):
    text = "  ab \n\n\tdcba\r\n \nc"
    out = post(server, "/v1/translate", {"inputs": [text, "", "  "]}).json()["outputs"]
    ab, dcba, c = reference.decode(["ab", "dcba", "c"])
    assert out == ["  %s \n\n\t%s\r\n \n%s" % (ab, dcba, c), "", "  "]
    # Lines over the input limit are split into sentences and joined back.
    server["service"].config.max_input_tokens = 4
    try:
        out = post(server, "/v1/translate", {"inputs": "ab. dcbad!  cc"}).json()["outputs"]
    finally:
        server["service"].config.max_input_tokens = 0
    assert out == "%s %s  %s" % tuple(reference.decode(["ab.", "dcbad!", "cc"]))


def test_libretranslate_api(server, reference):
    answer = post(server, "/translate", {"q": WORDS[:3], "source": "low", "target": "up"})
    assert answer.json() == {"translatedText": reference.decode(WORDS[:3])}
    form = httpx.post(server["url"] + "/translate", data={"q": "dcba", "source": "low",
                                                          "target": "up", "format": "text"})
    assert form.json() == {"translatedText": reference.decode("dcba")}
    alt = post(server, "/translate", {"q": "ab", "source": "auto", "target": "up",
                                      "alternatives": 1}).json()
    best, other = reference.decode(["ab"], nbest=2)[0]
    assert alt == {"translatedText": best.text, "alternatives": [other.text],
                   "detectedLanguage": {"language": "low", "confidence": 100}}
    assert httpx.get(server["url"] + "/languages").json() == [
        {"code": "low", "name": "low", "targets": ["up"]}]
    wrong = post(server, "/translate", {"q": "ab", "source": "en", "target": "de"})
    assert wrong.status_code == 400 and "no model translates en to de" in wrong.json()["error"]
    html = post(server, "/translate", {"q": "ab", "source": "low", "target": "up",
                                       "format": "html"})
    assert html.status_code == 400 and "format=html" in html.json()["error"]


def test_concurrent_clients_get_their_own_results_in_batches(server, reference):
    engine, before = server["engine"], metrics_text(server)
    seen = len(engine.batches)
    expected = dict(zip(WORDS, reference.decode(WORDS)))
    engine.gate.clear()  # hold the first batch so the others queue up behind it
    try:
        with concurrent.futures.ThreadPoolExecutor(len(WORDS)) as pool:
            futures = {word: pool.submit(post, server, "/v1/translate",
                                         {"inputs": [word, word + "a"]}) for word in WORDS}
            wait_for(lambda: metric(metrics_text(server), "t2t_serve_queue_depth",
                                    model=NAME) >= 2 * len(WORDS) - 8, what="a full queue")
            engine.gate.set()
            answers = {word: future.result() for word, future in futures.items()}
    finally:
        engine.gate.set()
    expected_a = dict(zip(WORDS, reference.decode([w + "a" for w in WORDS])))
    for word, answer in answers.items():
        assert answer.json()["outputs"] == [expected[word], expected_a[word]]
    after = metrics_text(server)
    batches = (metric(after, "t2t_serve_batch_size_count", model=NAME) -
               metric(before, "t2t_serve_batch_size_count", model=NAME))
    texts = (metric(after, "t2t_serve_batch_size_sum", model=NAME) -
             metric(before, "t2t_serve_batch_size_sum", model=NAME))
    assert texts == 2 * len(WORDS)
    # 24 texts from 12 requests: the first batch closes as soon as the requests in flight
    # are queued (or after --max_wait_ms), the queued rest in batches of --max_batch_size.
    assert batches == len(engine.batches) - seen <= 4
    assert sum(engine.batches[seen:]) == 2 * len(WORDS) and max(engine.batches[seen:]) == 8
    texts_sent = WORDS + [w + "a" for w in WORDS]
    generated = Progress("reference", unit="texts", every_seconds=float("inf"))
    reference.decode(texts_sent, progress=generated)  # it counts the ids the decodes generate
    assert generated.extra["tokens"] > 2 * len(WORDS)
    for name, expected_ids in [
            ("t2t_serve_tokens_in_total",
             sum(len(reference.inputs_encoder.encode(t)) + 1 for t in texts_sent)),
            ("t2t_serve_tokens_out_total", generated.extra["tokens"])]:
        assert metric(after, name, model=NAME) - metric(before, name, model=NAME) == \
            expected_ids, name
    assert metric(after, "t2t_serve_requests_total", endpoint="/v1/translate",
                  code="200") >= len(WORDS)


def closed_batches(server, closed):
    return metric(metrics_text(server), "t2t_serve_batches_closed_total", model=NAME,
                  closed=closed)


def test_a_lone_request_is_not_held_for_max_wait(server, reference):
    batcher = server["service"].batchers[NAME]
    all_in, waited = closed_batches(server, "all_in"), closed_batches(server, "waited")
    batcher.max_wait = 600.0  # were a lone request held for it, the client's 60 s would end
    try:
        for word in WORDS[:3]:  # one client, one request at a time: each decoded at once
            answer = post(server, "/v1/translate", {"inputs": word})
            assert answer.json()["outputs"] == reference.decode([word])[0]
    finally:
        batcher.max_wait = CONFIG["max_wait_ms"] / 1000.0
    assert closed_batches(server, "all_in") - all_in == 3
    assert closed_batches(server, "waited") == waited
    assert metric(metrics_text(server), "t2t_serve_in_flight") == 0


def test_a_batch_waits_for_a_request_being_read(server, reference):
    import threading
    engine, batcher = server["engine"], server["service"].batchers[NAME]
    seen, all_in = len(engine.batches), closed_batches(server, "all_in")
    sent_half = threading.Event()
    release = threading.Event()

    def slow_body():  # a request in flight whose body is still on its way
        yield b'{"inputs": "db'
        sent_half.set()
        release.wait(60)
        yield b'ca"}'

    batcher.max_wait = 600.0
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            slow = pool.submit(httpx.post, server["url"] + "/v1/translate", content=slow_body(),
                               timeout=60)
            wait_for(lambda: metric(metrics_text(server), "t2t_serve_in_flight") == 1,
                     what="the slow request to arrive")
            quick = pool.submit(post, server, "/v1/translate", {"inputs": "ab"})
            wait_for(lambda: batcher.queued == 1, what="the quick request's text")
            assert len(engine.batches) == seen  # it waits for the request being read
            release.set()
            answers = [slow.result().json()["outputs"], quick.result().json()["outputs"]]
    finally:
        release.set()
        batcher.max_wait = CONFIG["max_wait_ms"] / 1000.0
    assert answers == reference.decode(["dbca", "ab"])
    assert engine.batches[seen:] == [2]  # one batch, closed once both were queued
    assert closed_batches(server, "all_in") - all_in == 1


def test_a_batch_waits_for_clients_in_a_loop_it_just_answered(server, reference):
    # Two clients on kept-alive connections, each sending its next request when answered: a
    # batch waits (up to --max_wait_ms) for a client answered that has not come back, and
    # never for one that closed its connection.
    import time
    engine, batcher = server["engine"], server["service"].batchers[NAME]
    traffic = server["service"].traffic
    a, b = httpx.Client(timeout=60), httpx.Client(timeout=60)

    def send(client, word, delay=0.0):
        time.sleep(delay)
        started = time.monotonic()
        answer = client.post(server["url"] + "/v1/translate", json={"inputs": word})
        return answer.json()["outputs"], time.monotonic() - started

    # The expected decodes first: a slow first decode on the test's thread between an answer
    # and the next request would make that client late.
    expected = dict(zip(["dcba", "bad", "dd", "cab"],
                        reference.decode(["dcba", "bad", "dd", "cab"])))
    try:
        for client, word in ((a, "ab"), (b, "cd"), (a, "abc"), (b, "cdc")):
            send(client, word)  # a second request on a connection: a client in a loop
        seen = len(engine.batches)
        all_in, waited = closed_batches(server, "all_in"), closed_batches(server, "waited")
        batcher.max_wait = 600.0
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            first = pool.submit(send, a, "dcba")
            late = pool.submit(send, b, "bad", 0.3)
            (out_a, seconds_a), (out_b, _) = first.result(), late.result()
        assert [out_a, out_b] == [expected["dcba"], expected["bad"]]
        assert engine.batches[seen:] == [2] and seconds_a >= 0.25  # it waited for b
        assert closed_batches(server, "all_in") - all_in == 1
        batcher.max_wait = 0.5  # b stays away: a's next batch closes after --max_wait_ms
        out_a, seconds_a = send(a, "dd")
        assert out_a == expected["dd"] and engine.batches[seen + 1:] == [1]
        assert seconds_a >= 0.3 and closed_batches(server, "waited") - waited == 1
        batcher.max_wait = 600.0  # b closes its connection: nobody to wait for
        b.close()
        out_a, seconds_a = send(a, "cab")
        assert out_a == expected["cab"] and engine.batches[seen + 2:] == [1]
        assert closed_batches(server, "all_in") - all_in == 2
        a.close()
        wait_for(lambda: traffic.company_until(600.0) == 0.0,
                 what="the closed connections to be forgotten")
    finally:
        batcher.max_wait = CONFIG["max_wait_ms"] / 1000.0
        a.close()
        b.close()


def test_a_batch_queued_behind_a_decode_waits_for_the_clients_it_answers(server, reference):
    # --max_wait_ms counts from the end of the decode a batch queued behind, not from its
    # first text: b's request waits there for a, in a loop, whose answer that decode is (the
    # old rule closed it at once, its wait long over: batches [1, 1, 1] instead of [1, 2]).
    # A client that connects once per request is not waited for.
    import time
    engine, batcher = server["engine"], server["service"].batchers[NAME]
    traffic = server["service"].traffic
    a, b = httpx.Client(timeout=60), httpx.Client(timeout=60)

    def send(client, word):
        return client.post(server["url"] + "/v1/translate", json={"inputs": word})

    def loop(client, words):  # the next request as soon as the last is answered
        return [send(client, word).json()["outputs"] for word in words]

    expected = dict(zip(["dcba", "bad", "cab", "dd", "abcd"],
                        reference.decode(["dcba", "bad", "cab", "dd", "abcd"])))
    try:
        for client, word in ((a, "ab"), (b, "cd"), (a, "abc"), (b, "cdc")):
            send(client, word)  # a second request on a connection: a client in a loop
        batcher.max_wait = 0.5
        time.sleep(0.6)  # longer than --max_wait_ms: nobody answered is awaited any more
        seen, all_in = len(engine.batches), closed_batches(server, "all_in")
        engine.gate.clear()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            looped = pool.submit(loop, a, ["dcba", "bad"])
            wait_for(engine.waiting.is_set, what="a's first request at the engine")
            queued = pool.submit(send, b, "cab")
            wait_for(lambda: batcher.queued == 1, what="b's request queued behind it")
            time.sleep(0.7)  # b has waited longer than --max_wait_ms before the decode ends
            engine.gate.set()
            assert looped.result() == [expected["dcba"], expected["bad"]]
            assert queued.result().json()["outputs"] == expected["cab"]
        assert engine.batches[seen:] == [1, 2]
        assert closed_batches(server, "all_in") - all_in == 2

        # Clients that connect once per request: the batch behind the decode closes as soon as
        # the decode ends.
        a.close()
        b.close()
        wait_for(lambda: traffic.company_until(600.0) == 0.0,
                 what="the closed connections to be forgotten")
        seen, all_in = len(engine.batches), closed_batches(server, "all_in")
        batcher.max_wait = 600.0  # were it waited for, the client's 60 s would run out
        engine.gate.clear()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            once = pool.submit(post, server, "/v1/translate", {"inputs": "dd"})
            wait_for(engine.waiting.is_set, what="the one-shot request at the engine")
            queued = pool.submit(post, server, "/v1/translate", {"inputs": "abcd"})
            wait_for(lambda: batcher.queued == 1, what="the next request queued behind it")
            engine.gate.set()
            started = time.monotonic()
            assert queued.result().json()["outputs"] == expected["abcd"]
            assert time.monotonic() - started < 30  # not held for --max_wait_ms
            assert once.result().json()["outputs"] == expected["dd"]
        assert engine.batches[seen:] == [1, 1]
        assert closed_batches(server, "all_in") - all_in == 2
    finally:
        engine.gate.set()
        batcher.max_wait = CONFIG["max_wait_ms"] / 1000.0
        a.close()
        b.close()


def test_batches_by_settings_and_by_tokens(server, reference):
    engine, batcher = server["engine"], server["service"].batchers[NAME]
    seen = len(engine.batches)
    engine.gate.clear()
    try:
        with concurrent.futures.ThreadPoolExecutor(7) as pool:
            first = pool.submit(post, server, "/v1/translate", {"inputs": "ab"})
            wait_for(engine.waiting.is_set, what="the first batch")
            futures = [pool.submit(post, server, "/v1/translate", {"inputs": [w], **kw})
                       for w in WORDS[:3] for kw in ({}, {"nbest": 2})]
            wait_for(lambda: batcher.queued == 6, what="six queued texts")
            engine.gate.set()
            answers = [f.result().json()["outputs"] for f in futures]
            first.result()
    finally:
        engine.gate.set()
    # Two batches after the first: three texts decoded with one best, three with two.
    assert engine.batches[seen:] == [1, 3, 3]
    assert sorted(s.nbest for s in engine.settings[seen + 1:]) == [1, 2]
    nbest = reference.decode(WORDS[:3], nbest=2)
    assert answers == [x for w, hs in zip(reference.decode(WORDS[:3]), nbest)
                       for x in ([w], [[h.text for h in hs]])]
    # --max_batch_tokens: "ab" is 3 ids (EOS included), so 10 ids take 3 texts a batch.
    seen = len(engine.batches)
    batcher.max_batch_tokens = 10
    try:
        assert post(server, "/v1/translate", {"inputs": ["ab"] * 8}).status_code == 200
    finally:
        batcher.max_batch_tokens = 0
    assert engine.batches[seen:] == [3, 3, 2]


def test_timed_out_and_abandoned_requests_leave_the_queue(server):
    engine, service = server["engine"], server["service"]
    before = metrics_text(server)
    engine.gate.clear()
    service.config.request_timeout = 0.5
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda w: post(server, "/v1/translate", {"inputs": w}),
                                    ["ab", "cd"]))
        assert [a.status_code for a in answers] == [504, 504]
        assert "--request_timeout=0.5" in answers[0].json()["error"]
        service.config.request_timeout = 60
        # Clients that go away (their own timeout) leave the queue too.
        for word in ["abc", "bcd"]:
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(server["url"] + "/v1/translate", json={"inputs": word}, timeout=0.3)
        wait_for(lambda: metric(metrics_text(server), "t2t_serve_dropped_total", model=NAME,
                                reason="client_gone") -
                 metric(before, "t2t_serve_dropped_total", model=NAME, reason="client_gone")
                 == 2, what="the abandoned requests to leave")
        after = metrics_text(server)
        assert metric(after, "t2t_serve_queue_depth", model=NAME) == 0
        assert metric(after, "t2t_serve_dropped_total", model=NAME, reason="timeout") - \
            metric(before, "t2t_serve_dropped_total", model=NAME, reason="timeout") == 2
    finally:
        service.config.request_timeout = 60
        engine.gate.set()
    assert post(server, "/v1/translate", {"inputs": "ab"}).status_code == 200


def test_limits_bad_requests_and_unknown_models(server):
    url = server["url"] + "/v1/translate"
    many = post(server, "/v1/translate", {"inputs": ["a"] * 33})
    assert many.status_code == 413 and "--max_texts=32" in many.json()["error"]
    long = post(server, "/v1/translate", {"inputs": "a" * 401})
    assert long.status_code == 413 and "--max_chars=400" in long.json()["error"]
    bad = httpx.post(url, content=b'{"inputs": ["ab"', headers={"content-type":
                                                                 "application/json"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("malformed JSON")
    latin1 = httpx.post(url, content='{"inputs": "caf\u00e9"}'.encode("latin-1"))
    assert latin1.status_code == 400 and "not UTF-8" in latin1.json()["error"]
    field = post(server, "/v1/translate", {"inputs": "ab", "beam_size": 0})
    assert field.status_code == 400 and field.json()["error"].startswith("beam_size")
    too_many = post(server, "/v1/translate", {"inputs": "ab", "beam_size": 2, "nbest": 3})
    assert too_many.status_code == 400 and "nbest=3" in too_many.json()["error"]
    bound = post(server, "/v1/translate", {"inputs": "ab", "stopping_bound": "current"})
    assert bound.status_code == 400 and bound.json()["error"] == (
        "stopping_bound: Input should be 'max_length' or 'current_length'")
    unknown = post(server, "/v1/translate", {"inputs": "ab", "model": "low-upp"})
    assert unknown.status_code == 404 and "did you mean low-up" in unknown.json()["error"]
    for answer in (many, long, bad, latin1, field, too_many, unknown):
        assert "\n" not in answer.json()["error"]
    # A full queue answers 429 with Retry-After, and never queues beyond --max_queue.
    engine = server["engine"]
    engine.gate.clear()
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            first = pool.submit(post, server, "/v1/translate", {"inputs": ["ab"] * 30})
            wait_for(engine.waiting.is_set, what="the first batch")
            full = post(server, "/v1/translate", {"inputs": ["ab"] * 30})
            engine.gate.set()
            assert first.result().status_code == 200
    finally:
        engine.gate.set()
    assert full.status_code == 429 and full.headers["retry-after"] == "1"
    assert "--max_queue=40" in full.json()["error"]


def test_api_keys_and_rate(server):
    service = server["service"]
    service.access = access.Access({"k1", "k2"}, rate=2)
    try:
        assert post(server, "/v1/translate", {"inputs": "ab"}).status_code == 401
        assert post(server, "/v1/translate", {"inputs": "ab"},
                    headers={"x-api-key": "k3"}).status_code == 403
        good = [post(server, "/v1/translate", {"inputs": "ab"},
                     headers={"authorization": "Bearer k1"}) for _ in range(2)]
        assert [g.status_code for g in good] == [200, 200]
        over = post(server, "/v1/translate", {"inputs": "ab"}, headers={"x-api-key": "k1"})
        assert over.status_code == 429 and int(over.headers["retry-after"]) >= 1
        libre = post(server, "/translate", {"q": "ab", "source": "low", "target": "up",
                                            "api_key": "k2"})
        assert libre.status_code == 200
    finally:
        service.access = access.Access()


def test_models_health_openapi_and_page(server):
    models = httpx.get(server["url"] + "/v1/models").json()["models"]
    assert [(m["name"], m["ready"], m["engine"]) for m in models] == [
        (NAME, True, "tensorflow")]
    assert httpx.get(server["url"] + "/health").json() == {"status": "ok"}
    schema = httpx.get(server["url"] + "/openapi.json").json()
    assert set(schema["paths"]) == {"/v1/translate", "/translate", "/languages", "/v1/models",
                                    "/health", "/ready", "/metrics", "/"}
    body = schema["paths"]["/v1/translate"]["post"]["requestBody"]["content"]
    assert "inputs" in body["application/json"]["schema"]["properties"]
    assert "413" in schema["paths"]["/v1/translate"]["post"]["responses"]
    assert "application/x-www-form-urlencoded" in \
        schema["paths"]["/translate"]["post"]["requestBody"]["content"]
    assert "/v1/translate" in httpx.get(server["url"] + "/").text


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install "
                    "chromium); the page's browser test needs it")
def test_the_page_translates_in_headless_chromium(server, reference, tmp_path):
    # The page's own script reads ?q=, lists the models, POSTs /v1/translate and writes the
    # translation into the page; --dump-dom prints the page after its script ran.
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--user-data-dir=%s" % (tmp_path / "chromium"),
         "--virtual-time-budget=5000", "--dump-dom", server["url"] + "/?q=dcba"],
        capture_output=True, text=True, timeout=120).stdout
    assert '<pre id="output">%s</pre>' % reference.decode("dcba") in dom, dom[-2000:]
    assert '<option value="%s">' % NAME in dom


def test_ready_is_503_while_loading_and_when_an_engine_fails(server):
    # Last in the module: the engine fails for good.
    import threading
    release = threading.Event()

    def slow_then_broken():
        release.wait(60)
        raise OSError("no model.bin in /nowhere")

    with running_server({"broken": slow_then_broken}) as (url, _):
        loading = httpx.get(url + "/ready")
        assert loading.status_code == 503 and loading.json()["models"] == {
            "broken": "loading"}
        assert post({"url": url}, "/v1/translate", {"inputs": "ab"}).status_code == 503
        release.set()
        wait_for(lambda: "failed" in httpx.get(url + "/ready").text, what="the failure")
        assert httpx.get(url + "/ready").status_code == 503
        assert httpx.get(url + "/health").status_code == 200

    server["engine"].fail.set()
    failed = post(server, "/v1/translate", {"inputs": "ab"})
    assert failed.status_code == 503 and "the engine died" in failed.json()["error"]
    ready = httpx.get(server["url"] + "/ready")
    assert ready.status_code == 503
    assert "the engine died" in ready.json()["models"][NAME]
    assert post(server, "/v1/translate", {"inputs": "ab"}).status_code == 503

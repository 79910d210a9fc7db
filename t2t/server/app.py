"""The ASGI application of t2t-serve (FastAPI): its endpoints over the models' batchers.

    POST /v1/translate   {"model"?, "inputs": str | [str], "beam_size"?, "alpha"?, "nbest"?,
                          "stopping_bound"?, "return_scores"?}  ->  {"model", "outputs",
                          "scores"?}
    POST /translate      LibreTranslate's API (JSON or a form): q, source, target, format,
                         alternatives, api_key  ->  {"translatedText", "alternatives"?}
    GET  /languages      LibreTranslate's list of languages (models named SRC-TGT)
    GET  /v1/models      the models, their engines and whether they are ready
    GET  /health         200 while the process runs
    GET  /ready          200 once every model is loaded; 503 before, when an engine failed
                         and while stopping
    GET  /metrics        Prometheus metrics (t2t.server.metrics)
    GET  /               a page to type a text and translate it

Errors are JSON `{"error": "<one line>"}`: 400 bad JSON, a body that is not UTF-8 or a bad
field; 401/403 API keys; 404 an unknown model (with the closest names); 413 over
--max_chars/--max_texts; 429 a full queue or a key over its rate (with Retry-After); 503 a
model not ready; 504 past --request_timeout.
"""
import asyncio
import dataclasses
import json
import time
import urllib.parse
from typing import List, Literal, Optional, Union

import fastapi
import pydantic
from fastapi import responses

from t2t.core import registry
import t2t.server.access as access
import t2t.server.batching as batching
import t2t.server.metrics as metrics_lib
import t2t.server.page as page
import t2t.server.texts as texts


@dataclasses.dataclass
class ServerConfig:
    """The serving settings (t2t-serve's flags of the same names)."""
    max_batch_size: int = 32
    max_batch_tokens: int = 0
    max_wait_ms: float = 30.0
    max_queue: int = 1024
    request_timeout: float = 30.0
    max_chars: int = 10000
    max_texts: int = 64
    max_input_tokens: int = 0  # lines over it are split into sentences (0: the model's limit)
    drain_seconds: float = 30.0
    api_keys: Optional[frozenset] = None
    key_requests_per_minute: float = 0.0


class TranslateRequest(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", protected_namespaces=())
    model: Optional[str] = pydantic.Field(None, description="A model's name (default: the "
                                          "first model given to t2t-serve).")
    inputs: Union[str, List[str]] = pydantic.Field(..., description="A text or a list of "
                                                   "texts; each line is translated on its own.")
    beam_size: Optional[int] = pydantic.Field(None, ge=1, description="1 is greedy; default "
                                              "the model's.")
    alpha: Optional[float] = pydantic.Field(None, description="The length penalty exponent.")
    nbest: Optional[int] = pydantic.Field(None, ge=1, description="Return this many outputs "
                                          "per input (a list each).")
    stopping_bound: Optional[Literal["max_length", "current_length"]] = pydantic.Field(
        None, description="When a beam search ends: max_length (T2T's exact search, the "
        "default) or current_length (once the best finished hypothesis beats the alive ones "
        "at their current length: sooner; TensorFlow engines).")
    return_scores: bool = pydantic.Field(False, description="Add each output's score (its "
                                         "log-probability with the length penalty).")
    api_key: Optional[str] = None


class TranslateResponse(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(protected_namespaces=())
    model: str
    outputs: Union[str, List[str], List[List[str]]]
    scores: Optional[Union[float, List[float], List[List[float]]]] = None


class LibreTranslateRequest(pydantic.BaseModel):
    q: Union[str, List[str]] = pydantic.Field(..., description="A text or a list of texts.")
    source: str = pydantic.Field(..., description="Source language code, or auto.")
    target: str = pydantic.Field(..., description="Target language code.")
    format: str = pydantic.Field("text", description="text (html is not supported).")
    alternatives: int = pydantic.Field(0, ge=0, description="Alternative translations to add.")
    api_key: Optional[str] = None


class LibreTranslateResponse(pydantic.BaseModel):
    translatedText: Union[str, List[str]]
    alternatives: Optional[Union[List[str], List[List[str]]]] = None
    detectedLanguage: Optional[dict] = None


ERROR = {"content": {"application/json": {"schema": {
    "type": "object", "properties": {"error": {"type": "string"}}}}}}


def _body_schema(model, form=False):
    schema = model.model_json_schema()
    content = {"application/json": {"schema": schema}}
    if form:
        content["application/x-www-form-urlencoded"] = {"schema": schema}
    return {"requestBody": {"required": True, "content": content}}


class Failure(Exception):
    """An answer other than 200: status code, one-line message, extra headers."""

    def __init__(self, status, message, headers=None):
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


def _one_line(text):
    return " ".join(str(text).split())


def _validation_message(error):
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    return "%s: %s" % (where, first["msg"])


async def _read_body(request, form=False):
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Failure(400, "the request body is not UTF-8 (byte %d); send UTF-8 text" %
                      error.start) from None
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if form and kind == "application/x-www-form-urlencoded":
        fields = urllib.parse.parse_qs(text, keep_blank_values=True)
        return {name: values if name == "q" and len(values) > 1 else values[-1]
                for name, values in fields.items()}
    if form and kind.startswith("multipart/"):
        raise Failure(415, "multipart forms are not read; send JSON or "
                           "application/x-www-form-urlencoded")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as error:
        raise Failure(400, "malformed JSON: %s" % _one_line(error)) from None
    if not isinstance(body, dict):
        raise Failure(400, "the JSON body must be an object, not %s" % type(body).__name__)
    return body


class Service:
    """The models, their batchers and the rules: what the endpoints call."""

    def __init__(self, loaders, config, metrics):
        self.config = config
        self.metrics = metrics
        self.access = access.Access(config.api_keys, config.key_requests_per_minute)
        self.traffic = batching.Traffic()
        self.batchers = {
            name: batching.Batcher(name, load, max_batch_size=config.max_batch_size,
                                   max_batch_tokens=config.max_batch_tokens,
                                   max_wait_ms=config.max_wait_ms,
                                   max_queue=config.max_queue, metrics=metrics,
                                   traffic=self.traffic)
            for name, load in loaders.items()}
        self.draining = False

    def start(self):
        for batcher in self.batchers.values():
            batcher.start()

    def stop(self):
        for batcher in self.batchers.values():
            batcher.stop(self.config.drain_seconds)

    def readiness(self):
        """(ready, {model: "ready" | why not})."""
        states = {}
        for name, batcher in self.batchers.items():
            states[name] = ("ready" if batcher.ready else batcher.error or "loading")
        ready = not self.draining and all(s == "ready" for s in states.values())
        return ready, states

    def batcher(self, name):
        if name is None:
            return next(iter(self.batchers.values()))
        if name not in self.batchers:
            close = registry.closest_names(name, self.batchers, n=3)
            raise Failure(404, "no model %r; the models are %s%s" % (
                name, ", ".join(self.batchers),
                "; did you mean %s?" % " or ".join(close) if close else ""))
        return self.batchers[name]

    def check_key(self, key):
        try:
            self.access.check(key)
        except access.Refused as refused:
            headers = {"Retry-After": str(refused.retry_after)} if refused.retry_after else {}
            raise Failure(refused.status, str(refused), headers) from None

    def check_limits(self, inputs):
        if len(inputs) > self.config.max_texts:
            raise Failure(413, "the request has %d texts; the limit is --max_texts=%d" % (
                len(inputs), self.config.max_texts))
        chars = sum(len(text) for text in inputs)
        if chars > self.config.max_chars:
            raise Failure(413, "the request has %d characters; the limit is --max_chars=%d"
                          % (chars, self.config.max_chars))

    async def translate(self, request, batcher, inputs, beam_size=None, alpha=None, nbest=1,
                        stopping_bound=None):
        """The translations of `inputs` (texts, scores), through the batcher."""
        if batcher.model is None or batcher.error is not None:
            raise Failure(503, "model %s is not ready: %s" % (
                batcher.name, batcher.error or "loading"))
        model = batcher.model
        limit = self.config.max_input_tokens or (
            model.input_limit.ids - 1 if model.input_limit else 0)

        counted = {}  # Layout.of counts each line, then the pieces are counted again

        def count_ids(text):
            if text not in counted:
                counted[text] = len(model.inputs_encoder.encode(text))
            return counted[text]

        beams = model.default_settings.beam_size if beam_size is None else beam_size
        if nbest > beams:
            raise Failure(400, "nbest=%d: give 1 to the beam size (%d)" % (nbest, beams))
        try:
            layout = texts.Layout.of(inputs, count_ids, limit)
            tokens = [count_ids(p) + 1 for p in layout.pieces]
        except (ValueError, KeyError) as error:
            raise Failure(400, "a text cannot be encoded: %s" % _one_line(error)) from None
        if not layout.pieces:
            return layout.join([], nbest)
        settings = (("beam_size", beam_size), ("alpha", alpha), ("nbest", nbest),
                    ("stopping_bound", stopping_bound))
        loop = asyncio.get_running_loop()
        job = batching.Job(layout.pieces, tokens, settings, loop, loop.create_future())
        try:
            batcher.submit(job)
        except batching.QueueFull as error:
            raise Failure(429, str(error), {"Retry-After": "1"}) from None
        except batching.EngineUnavailable as error:
            raise Failure(503, str(error)) from None
        gone = asyncio.ensure_future(_disconnected(request))
        try:
            done, _ = await asyncio.wait({job.future, gone},
                                         timeout=self.config.request_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            batcher.cancel(job, "client_gone")
            raise
        finally:
            gone.cancel()
        if job.future not in done:
            job.future.cancel()
            if gone in done:
                batcher.cancel(job, "client_gone")
                raise Failure(499, "the client went away")
            batcher.cancel(job, "timeout")
            raise Failure(504, "no translation within --request_timeout=%g s" %
                          self.config.request_timeout)
        try:
            decoded = job.future.result()
        except batching.EngineUnavailable as error:
            raise Failure(503, str(error)) from None
        except batching.BadInput as error:
            raise Failure(400, str(error)) from None
        return layout.join(decoded, nbest)


async def _disconnected(request):
    """Returns when the client closes its connection."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _key_of(request, body):
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.headers.get("x-api-key") or body.get("api_key")


ENDPOINTS = ("/v1/translate", "/translate", "/languages", "/v1/models", "/health", "/ready",
             "/metrics", "/")


TRANSLATING = ("/v1/translate", "/translate")


class _Counted:
    """ASGI middleware counting each answer by endpoint and status code, with its latency,
    and the translation requests in flight (`batching.Traffic`: from arrival to answer)."""

    def __init__(self, app, metrics, traffic):
        self.app = app
        self.metrics = metrics
        self.traffic = traffic

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.monotonic(), [500]
        translating = scope["path"] in TRANSLATING
        connection = scope.get("client")  # (host, port): one kept-alive connection
        connection = tuple(connection) if connection else None
        if translating:
            self.traffic.arrived(connection)
            self.metrics.in_flight.inc()

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            path = scope["path"] if scope["path"] in ENDPOINTS else "other"
            self.metrics.answered(path, status[0], time.monotonic() - started)
            if translating:
                self.metrics.in_flight.dec()
                self.traffic.answered(connection)


def create_app(loaders, config=None, title="t2t-serve"):
    """The app serving `loaders` ({name: function returning a `TrainedModel`}, loaded in
    each model's engine thread when the app starts) with `config` (a `ServerConfig`)."""
    config = config or ServerConfig()
    metrics = metrics_lib.Metrics()
    service = Service(loaders, config, metrics)

    async def lifespan(app):
        service.start()
        yield
        await asyncio.get_running_loop().run_in_executor(None, service.stop)

    app = fastapi.FastAPI(title=title, lifespan=lifespan, description=__doc__.split("\n")[0])
    app.state.service = service

    app.add_middleware(_Counted, metrics=metrics, traffic=service.traffic)

    def error(status, message, headers=None):
        return responses.JSONResponse({"error": _one_line(message)}, status_code=status,
                                      headers=headers)

    async def answer(work):
        try:
            return await work
        except Failure as failure:
            return error(failure.status, failure, failure.headers)

    failures = {code: dict(ERROR, description=text) for code, text in (
        (400, "Bad JSON, a body not in UTF-8, or a bad field"), (401, "No API key"),
        (403, "A wrong API key"), (404, "No such model"), (413, "Over --max_chars or "
        "--max_texts"), (429, "The queue is full, or the key is over its rate"),
        (503, "The model is not ready"), (504, "Past --request_timeout"))}

    @app.post("/v1/translate", response_model=TranslateResponse, response_model_exclude_none=True, responses=failures,
              openapi_extra=_body_schema(TranslateRequest), summary="Translate texts")
    async def v1_translate(request: fastapi.Request):
        async def work():
            body = await _read_body(request)
            service.check_key(_key_of(request, body))
            try:
                parsed = TranslateRequest.model_validate(body)
            except pydantic.ValidationError as invalid:
                raise Failure(400, _validation_message(invalid)) from None
            batcher = service.batcher(parsed.model)
            single = isinstance(parsed.inputs, str)
            inputs = [parsed.inputs] if single else parsed.inputs
            service.check_limits(inputs)
            nbest = parsed.nbest or 1
            outputs, scores = await service.translate(
                request, batcher, inputs, parsed.beam_size, parsed.alpha, nbest,
                parsed.stopping_bound)
            if parsed.nbest is not None and nbest == 1:
                outputs, scores = [[o] for o in outputs], [[s] for s in scores]
            result = {"model": batcher.name, "outputs": outputs[0] if single else outputs}
            if parsed.return_scores:
                result["scores"] = scores[0] if single else scores
            return result
        return await answer(work())

    def pair_of(source, target):
        names = list(service.batchers)
        if source == "auto":
            matches = [n for n in names if n.split("-", 1)[-1] == target]
            if len(matches) == 1:
                return matches[0]
        name = "%s-%s" % (source, target)
        if name in service.batchers:
            return name
        if len(names) == 1 and "-" not in names[0]:
            return names[0]  # one model with no language pair: it serves any pair
        raise Failure(400, "no model translates %s to %s; the models are %s (a model named "
                      "SRC-TGT serves source=SRC&target=TGT)" % (source, target,
                                                                  ", ".join(names)))

    @app.post("/translate", response_model=LibreTranslateResponse, response_model_exclude_none=True, responses=failures,
              openapi_extra=_body_schema(LibreTranslateRequest, form=True),
              summary="Translate (LibreTranslate's API)")
    async def libre_translate(request: fastapi.Request):
        async def work():
            body = await _read_body(request, form=True)
            service.check_key(_key_of(request, body))
            try:
                parsed = LibreTranslateRequest.model_validate(body)
            except pydantic.ValidationError as invalid:
                raise Failure(400, _validation_message(invalid)) from None
            if parsed.format not in ("text", ""):
                raise Failure(400, "format=%s is not supported; send format=text" %
                              parsed.format)
            name = pair_of(parsed.source, parsed.target)
            single = isinstance(parsed.q, str)
            inputs = [parsed.q] if single else parsed.q
            service.check_limits(inputs)
            nbest = 1 + parsed.alternatives
            outputs, _ = await service.translate(request, service.batcher(name), inputs,
                                                 nbest=nbest)
            if nbest == 1:
                result = {"translatedText": outputs[0] if single else outputs}
            else:
                best = [o[0] for o in outputs]
                others = [o[1:] for o in outputs]
                result = {"translatedText": best[0] if single else best,
                          "alternatives": others[0] if single else others}
            if parsed.source == "auto":
                result["detectedLanguage"] = {"language": name.split("-", 1)[0],
                                              "confidence": 100}
            return result
        return await answer(work())

    @app.get("/languages", summary="Languages (LibreTranslate's API)")
    async def languages():
        pairs = {}
        for name in service.batchers:
            if "-" in name:
                source, target = name.split("-", 1)
                pairs.setdefault(source, []).append(target)
        return [{"code": source, "name": source, "targets": sorted(targets)}
                for source, targets in sorted(pairs.items())]

    @app.get("/v1/models", summary="The models served")
    async def models():
        result = []
        for name, batcher in service.batchers.items():
            model = batcher.model
            result.append({"name": name, "ready": batcher.ready, "error": batcher.error,
                           "engine": model.engine_name if model is not None else None,
                           "path": model.path if model is not None else None})
        return {"models": result}

    @app.get("/health", summary="Live: 200 while the process serves")
    async def health():
        return {"status": "ok"}

    @app.get("/ready", summary="Ready: 200 once every model is loaded and none failed",
             responses={503: {"description": "A model loads, failed, or the server stops"}})
    async def ready():
        is_ready, states = service.readiness()
        if service.draining:
            states = dict(states, server="stopping")
        return responses.JSONResponse({"ready": is_ready, "models": states},
                                      status_code=200 if is_ready else 503)

    @app.get("/metrics", summary="Prometheus metrics", response_class=responses.Response)
    async def prometheus():
        body, kind = metrics.exposition()
        return responses.Response(body, media_type=kind)

    @app.get("/", summary="A page to translate with", response_class=responses.HTMLResponse)
    async def index():
        return responses.HTMLResponse(page.HTML)

    return app

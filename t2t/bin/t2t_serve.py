"""t2t-serve: serve trained t2t models over HTTP, batching texts across requests.

    t2t-serve --model=~/t2t_train/m30k --port=8000
    t2t-serve --model=en-de=~/t2t_train/m30k --model=de-en=~/t2t_train/m30k_de_en/export/ctranslate2
    curl -s localhost:8000/v1/translate -d '{"inputs": ["A man rides a horse."]}'
    # {"model": "en-de", "outputs": ["Ein Mann reitet auf einem Pferd."]}

Each --model is a training folder, a SavedModel or a CTranslate2 export, loaded once with
t2t.load (--engine, --quantization, --threads as there). Endpoints: POST /v1/translate,
LibreTranslate's POST /translate and GET /languages (a model named SRC-TGT), GET /v1/models,
/health, /ready, /metrics, and a page at /. SIGTERM stops after the requests in flight
(within --drain_seconds); a second signal stops at once. See docs/serving.md.
"""
import os

from absl import flags

from t2t.bin import cli
from t2t.core import errors

FLAGS = flags.FLAGS

_define = cli.define_once  # flags other programs in this process define are kept

_define(flags.DEFINE_multi_string, "model", [], "A model to serve: PATH or NAME=PATH "
        "(a training folder, a SavedModel or a CTranslate2 export); repeat for several.")
_define(flags.DEFINE_string, "engine", None, "tensorflow or ctranslate2 (default: the "
        "model's kind decides, as in t2t.load).")
_define(flags.DEFINE_string, "quantization", "float32", "With --engine=ctranslate2 on a "
        "training folder: the weights' type (float32, int8, ...).")
_define(flags.DEFINE_integer, "threads", 0, "CPU threads per engine (0: its default).")
_define(flags.DEFINE_string, "host", "127.0.0.1", "Address to listen on.")
_define(flags.DEFINE_integer, "port", 8000, "Port to listen on.")
_define(flags.DEFINE_integer, "max_batch_size", 32, "A batch closes at this many texts.")
_define(flags.DEFINE_integer, "max_batch_tokens", 0, "A batch closes at this many input ids "
        "(0: no bound).")
_define(flags.DEFINE_float, "max_wait_ms", 30.0, "A batch closes this long after its first "
        "text arrived, at the latest; it waits only while company is on its way (a request "
        "being read, a client in a loop just answered).")
_define(flags.DEFINE_integer, "max_queue", 1024, "Texts that may wait per model; beyond, "
        "429 with Retry-After.")
_define(flags.DEFINE_float, "request_timeout", 30.0, "Seconds before a request leaves the "
        "queue with 504.")
_define(flags.DEFINE_integer, "max_chars", 10000, "Characters per request (413 beyond).")
_define(flags.DEFINE_integer, "max_texts", 64, "Texts per request (413 beyond).")
_define(flags.DEFINE_integer, "max_input_tokens", 0, "Lines over this many input ids are "
        "split into sentences (0: the model's input limit).")
_define(flags.DEFINE_string, "api_keys", None, "A file with one API key a line: requests "
        "need one of them (401 without, 403 for another).")
_define(flags.DEFINE_float, "key_requests_per_minute", 0.0, "With --api_keys: requests a "
        "minute per key (429 beyond; 0: no limit).")
_define(flags.DEFINE_float, "drain_seconds", 30.0, "On SIGTERM: how long requests in "
        "flight may take to finish.")


def parse_models(values):
    """{name: path} of --model values (PATH names a model by its folder)."""
    models = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            path = value
            name = os.path.basename(os.path.normpath(os.path.expanduser(value))) or "model"
        if not name or not path:
            raise errors.UserError("--model=%s: give PATH or NAME=PATH" % value)
        if name in models:
            raise errors.UserError("--model: two models named %s; name them with "
                                   "--model=NAME=PATH" % name)
        models[name] = os.path.expanduser(path)
    return models


def main(argv):
    cli.reject_extra_args(argv, "t2t-serve")
    from t2t.inference import ENGINES
    if FLAGS.engine is not None and FLAGS.engine not in ENGINES:
        raise errors.UserError("--engine=%s: use %s" % (FLAGS.engine, " or ".join(ENGINES)))
    if not FLAGS.model:
        raise errors.UserError("give --model=PATH (or NAME=PATH), the model to serve")
    models = parse_models(FLAGS.model)
    for name, path in models.items():
        if not os.path.exists(path):
            raise errors.UserError("--model=%s=%s: no such file or folder" % (name, path))
    for flag in ("max_batch_size", "max_queue", "max_chars", "max_texts"):
        if getattr(FLAGS, flag) < 1:
            raise errors.UserError("--%s=%d: give 1 or more" % (flag, getattr(FLAGS, flag)))
    try:
        import t2t.server.access as access
        import t2t.server.app as app_lib
        import t2t.server.running as running
    except ImportError as error:
        raise errors.UserError("t2t-serve needs the serve extra (%s): pip install "
                               "'t2t-toolkit[serve]'" % error.name) from None
    # CTranslate2's OpenMP threads spin briefly, then sleep (docs/serving.md): set before any
    # engine loads libgomp; an OMP_WAIT_POLICY or GOMP_SPINCOUNT of the user's is kept.
    from t2t.serving import ctranslate2_export
    ctranslate2_export.set_openmp_wait()
    import t2t

    def loader(path):
        return lambda: t2t.load(path, engine=FLAGS.engine, quantization=FLAGS.quantization,
                                threads=FLAGS.threads)

    keys = access.read_api_keys(FLAGS.api_keys) if FLAGS.api_keys else None
    config = app_lib.ServerConfig(
        max_batch_size=FLAGS.max_batch_size, max_batch_tokens=FLAGS.max_batch_tokens,
        max_wait_ms=FLAGS.max_wait_ms, max_queue=FLAGS.max_queue,
        request_timeout=FLAGS.request_timeout, max_chars=FLAGS.max_chars,
        max_texts=FLAGS.max_texts, max_input_tokens=FLAGS.max_input_tokens,
        drain_seconds=FLAGS.drain_seconds, api_keys=frozenset(keys) if keys else None,
        key_requests_per_minute=FLAGS.key_requests_per_minute)
    print("t2t-serve: serving %s on http://%s:%d/" % (", ".join(models), FLAGS.host,
                                                      FLAGS.port), flush=True)
    return running.serve({name: loader(path) for name, path in models.items()}, config,
                        host=FLAGS.host, port=FLAGS.port)


def console_main(argv=None):
    """Entry point of the `t2t-serve` console script."""
    cli.run_main(main, "t2t-serve", argv=argv, doc=__doc__)


if __name__ == "__main__":
    console_main()

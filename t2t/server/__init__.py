"""t2t-serve's library: trained t2t models served over HTTP, with batching across requests.

    from t2t import server
    import t2t
    loaders = {"en-de": lambda: t2t.load("~/t2t_train/m30k")}
    server.serve(loaders, server.ServerConfig(max_batch_size=32, max_wait_ms=30), port=8000)

`create_app` gives the ASGI app (t2t.server.app has the endpoints), `make_server` a uvicorn
server that drains on SIGTERM (t2t.server.running), `t2t.server.batching` the per-model
queue and engine thread.
"""
from t2t.server.app import ServerConfig, create_app
from t2t.server.running import make_server, serve

__all__ = ["ServerConfig", "create_app", "make_server", "serve"]

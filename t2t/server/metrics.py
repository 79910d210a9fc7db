"""The server's Prometheus metrics (prometheus-client), on a registry of its own.

    t2t_serve_requests_total{endpoint, code}      requests answered, by status code
    t2t_serve_request_seconds{endpoint}           latency from request to answer
    t2t_serve_queue_depth{model}                  texts waiting for a batch
    t2t_serve_batch_size{model}                   texts per decoded batch
    t2t_serve_batch_seconds{model}                engine time per batch
    t2t_serve_batches_closed_total{model, closed} batches by why they closed: full,
                                                  all_in (no company on its way),
                                                  waited (max_wait_ms), stopping
    t2t_serve_in_flight                           translation requests being handled
    t2t_serve_tokens_in_total{model}              input ids decoded (EOS included)
    t2t_serve_tokens_out_total{model}             output ids generated (EOS included)
    t2t_serve_dropped_total{model, reason}        requests that left the queue (timeout,
                                                  client_gone)
"""
import prometheus_client

LATENCY_BUCKETS = (.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class Metrics:
    """The metrics of one server (a registry per server: several servers in one process,
    as tests run them, keep their own counts)."""

    def __init__(self):
        self.registry = prometheus_client.CollectorRegistry()
        kw = {"registry": self.registry, "namespace": "t2t_serve"}
        self.requests = prometheus_client.Counter(
            "requests", "Requests answered, by endpoint and status code.",
            ["endpoint", "code"], **kw)
        self.latency = prometheus_client.Histogram(
            "request_seconds", "Seconds from a request's arrival to its answer.",
            ["endpoint"], buckets=LATENCY_BUCKETS, **kw)
        self.queue_depth = prometheus_client.Gauge(
            "queue_depth", "Texts waiting for a batch.", ["model"], **kw)
        self.batch_size = prometheus_client.Histogram(
            "batch_size", "Texts per decoded batch.", ["model"], buckets=BATCH_BUCKETS, **kw)
        self.batch_seconds = prometheus_client.Histogram(
            "batch_seconds", "Engine seconds per batch.", ["model"], buckets=LATENCY_BUCKETS,
            **kw)
        self.closed = prometheus_client.Counter(
            "batches_closed", "Batches decoded, by why they closed: full, all_in (no "
            "company on its way), waited (max_wait_ms), stopping.",
            ["model", "closed"], **kw)
        self.in_flight = prometheus_client.Gauge(
            "in_flight", "Translation requests being handled (arrived, not yet answered).",
            **kw)
        self.tokens_in = prometheus_client.Counter(
            "tokens_in", "Input ids decoded (EOS included).", ["model"], **kw)
        self.tokens_out = prometheus_client.Counter(
            "tokens_out", "Output ids generated (EOS included).", ["model"], **kw)
        self.dropped = prometheus_client.Counter(
            "dropped", "Requests that left the queue before their answer.",
            ["model", "reason"], **kw)

    def batch(self, model, size, seconds, tokens_in, tokens_out):
        self.batch_size.labels(model).observe(size)
        self.batch_seconds.labels(model).observe(seconds)
        self.tokens_in.labels(model).inc(tokens_in)
        self.tokens_out.labels(model).inc(tokens_out)

    def answered(self, endpoint, code, seconds):
        self.requests.labels(endpoint, str(code)).inc()
        self.latency.labels(endpoint).observe(seconds)

    def exposition(self):
        """(body, content type) of /metrics."""
        return prometheus_client.generate_latest(self.registry), \
            prometheus_client.CONTENT_TYPE_LATEST

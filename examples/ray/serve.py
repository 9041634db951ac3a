"""Serving on Ray Serve: a model behind an HTTP endpoint with request
batching, graphcompiler's artifact beside onnxruntime in the same
deployment, then a bounded load test against localhost.

    python examples/ray/serve.py MODEL.onnx [--requests 400] [--clients 8]

Each request POSTs one row (the bytes of a float32 array of the input's
row shape) and gets back the first output's row the same way, raw float32
bytes (as JSON, a feature map of 100k values cost more than the model). `@serve.batch`
gathers concurrent requests into calls of up to `--batch` rows; the model
is compiled once, in the driver, for that batch, and each replica loads the
artifact's bytes (never compiling). The load test sends a fixed number of
requests from `--clients` threads, stops at `--time-limit` seconds, and
reports throughput and p50/p99 latency per engine, one engine deployed at a
time on the same replicas.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import sys
import threading
import time
from pathlib import Path

import numpy as np
from ray import serve
from starlette.responses import Response

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import Model, ModelInput, engine_payloads, random_rows, start_ray  # noqa: E402


class Endpoint:
    """The deployment's body: rows from requests, batched (`@serve.batch`,
    up to `batch` rows per model call), through one Model."""

    def __init__(self, engine: str, payload, threads: int, model_input: ModelInput, batch: int):
        self.model = Model(engine, payload, threads, model_input)
        self.row_shape = model_input.row_shape
        self.infer.set_max_batch_size(batch)

    async def __call__(self, request) -> Response:
        row = np.frombuffer(await request.body(), np.float32).reshape(self.row_shape)
        output = await self.infer(row)
        return Response(np.ascontiguousarray(output, np.float32).tobytes(),
                        media_type="application/octet-stream")  # fmt: skip

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.002)
    async def infer(self, rows: list[np.ndarray]) -> list[np.ndarray]:
        return list(self.model(np.stack(rows)))


def load_test(port: int, route: str, rows: np.ndarray, clients: int, time_limit: float) -> dict:
    """POST each row once from `clients` threads; latencies and throughput."""
    latencies: list[float] = []
    failures: list[str] = []
    next_row = iter(range(len(rows)))
    lock = threading.Lock()
    deadline = time.perf_counter() + time_limit

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=time_limit)
        while time.perf_counter() < deadline:
            with lock:
                index = next(next_row, None)
            if index is None:
                break
            start = time.perf_counter()
            try:
                connection.request("POST", route, body=rows[index].tobytes())
                response = connection.getresponse()
                body = response.read()
                if response.status != 200:
                    raise OSError(f"HTTP {response.status}: {body[:200]!r}")
                np.frombuffer(body, np.float32)
            except (OSError, ValueError) as error:
                failures.append(str(error))
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=time_limit)
                continue
            with lock:
                latencies.append(time.perf_counter() - start)
        connection.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"{len(failures)} requests failed, the first: {failures[0]}")
    return {
        "requests": len(latencies),
        "throughput": len(latencies) / seconds,
        "p50_ms": float(np.percentile(latencies, 50) * 1e3),
        "p99_ms": float(np.percentile(latencies, 99) * 1e3),
    }


def request(port: int, route: str, row: np.ndarray) -> np.ndarray:
    """One row's output, as the endpoint answers it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", route, body=row.tobytes())
        return np.frombuffer(connection.getresponse().read(), np.float32)
    finally:
        connection.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="an .onnx model with one input")
    parser.add_argument("--requests", type=int, default=400, help="requests per engine")
    parser.add_argument("--clients", type=int, default=8, help="concurrent client threads")
    parser.add_argument("--batch", type=int, default=8, help="most requests per model call")
    parser.add_argument("--replicas", type=int, default=2, help="replicas per engine")
    parser.add_argument("--threads", type=int, default=1, help="CPUs per replica")
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per load test")
    parser.add_argument("--port", type=int, default=0, help="HTTP port (default: a free one)")
    args = parser.parse_args(argv)

    start_ray(args.replicas * args.threads, __name__)
    port = args.port or free_port()
    serve.start(
        http_options={"host": "127.0.0.1", "port": port},
        logging_config={"log_level": "WARNING", "enable_access_log": False},
    )
    payloads, model_input = engine_payloads(args.model, args.batch)
    rows = random_rows(model_input, args.requests)
    endpoint = serve.deployment(
        Endpoint,
        num_replicas=args.replicas,
        ray_actor_options={"num_cpus": args.threads},
        max_ongoing_requests=2 * args.batch,
        logging_config={"log_level": "WARNING", "enable_access_log": False},
    )
    results = []
    try:
        for engine, payload in payloads.items():
            route = f"/{engine}"
            app = endpoint.bind(engine, payload, args.threads, model_input, args.batch)
            serve.run(app, name=engine, route_prefix=route)
            load_test(port, route, rows[: args.clients * 2], args.clients, args.time_limit)  # warm
            result = load_test(port, route, rows, args.clients, args.time_limit)
            answers = [request(port, route, row) for row in rows[:4]]
            serve.delete(engine)
            results.append({"engine": engine, **result, "answers": answers})
    finally:
        serve.shutdown()
    reference = np.stack(results[-1].pop("answers"))
    difference = np.abs(np.stack(results[0].pop("answers")) - reference).max()
    for r in results:
        r["max_rel_difference"] = float(difference / max(np.abs(reference).max(), 1e-30))
    print(f"{args.requests} requests of {model_input.row_shape} from {args.clients} clients, "
          f"batches of up to {args.batch} requests ({model_input.batch} rows a call), "
          f"{args.replicas} replicas x {args.threads} CPUs; "
          f"max relative difference {results[0]['max_rel_difference']:.1e}")  # fmt: skip
    for r in results:
        print(f"  {r['engine']:14} {r['requests']} requests, {r['throughput']:7.1f} requests/s, "
              f"p50 {r['p50_ms']:6.1f} ms, p99 {r['p99_ms']:6.1f} ms")  # fmt: skip
    return results


if __name__ == "__main__":
    main()

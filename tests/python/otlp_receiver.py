"""A small OTLP/HTTP receiver for the telemetry test (tests/tests/otlp_export.rs).

Listens on 127.0.0.1 (a free port), prints `listening on PORT`, then for every
`POST /v1/traces` (Content-Type application/x-protobuf) decodes the body with the official
OpenTelemetry protobuf definitions (PyPI's `opentelemetry-proto`) and prints one JSON line
per span: ids in hex, name, kind, attributes, links, status, and the resource's attributes.
Anything else is answered 404 (or 400 for a body that does not decode) and reported as
an `{"error": ...}` line.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status


def any_value(v):
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def attributes(kvs):
    return {kv.key: any_value(kv.value) for kv in kvs}


def emit(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path != "/v1/traces":
            emit({"error": "unexpected path " + self.path})
            self.send_response(404)
            self.end_headers()
            return
        if self.headers.get("Content-Type") != "application/x-protobuf":
            emit({"error": "unexpected content type " + str(self.headers.get("Content-Type"))})
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception as e:  # noqa: BLE001 - any decoding failure is the sender's bug
            emit({"error": "undecodable body: %s" % e})
            self.send_response(400)
            self.end_headers()
            return
        for rs in request.resource_spans:
            resource = attributes(rs.resource.attributes)
            for ss in rs.scope_spans:
                for s in ss.spans:
                    emit({
                        "resource": resource,
                        "scope": ss.scope.name,
                        "trace_id": s.trace_id.hex(),
                        "span_id": s.span_id.hex(),
                        "parent_span_id": s.parent_span_id.hex(),
                        "trace_state": s.trace_state,
                        "name": s.name,
                        "kind": Span.SpanKind.Name(s.kind),
                        "start": s.start_time_unix_nano,
                        "end": s.end_time_unix_nano,
                        "attributes": attributes(s.attributes),
                        "links": [
                            {"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()}
                            for l in s.links
                        ],
                        "status": Status.StatusCode.Name(s.status.code),
                    })
        out = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    emit({"listening": server.server_address[1]})
    server.serve_forever()


if __name__ == "__main__":
    main()

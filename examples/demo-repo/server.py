"""HTTP entry point of tinyweather: one GET endpoint, no sessions."""

from http.server import BaseHTTPRequestHandler, HTTPServer
import json

from forecast import lookup


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        city = self.path.strip("/") or "London"
        body = json.dumps(lookup(city)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", 8080), Handler).serve_forever()

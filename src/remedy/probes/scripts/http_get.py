"""remedy launch-probe helper (runs ON the host): one HTTP GET, or one POST of a JSON body;
prints "REMEDY-HTTP <status>" and, for a POST, "REMEDY-BODY <first 2000 chars of the answer>".

Runs on the host because the server usually listens on 127.0.0.1 there. Stdlib only.
Usage: python http_get.py URL TIMEOUT_S [JSON_BODY]. Status 0 means no HTTP answer (refused,
timeout).
"""

import sys
import urllib.error
import urllib.request

url, timeout = sys.argv[1], float(sys.argv[2])
body = sys.argv[3].encode() if len(sys.argv) > 3 else None
req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
answer = b""
try:
    with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 (a URL we built)
        status = r.status
        answer = r.read(2000) if body is not None else b""
except urllib.error.HTTPError as e:
    status = e.code
    answer = e.read(2000) if body is not None else b""
except Exception as e:  # noqa: BLE001
    print(f"REMEDY-HTTP 0 {type(e).__name__}: {e}")
    sys.exit(0)
print(f"REMEDY-HTTP {status}")
if body is not None:
    print("REMEDY-BODY " + answer.decode("utf-8", "replace").replace("\n", " "))

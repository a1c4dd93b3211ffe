"""remedy launch-probe helper (runs ON the host): one HTTP GET, prints "REMEDY-HTTP <status>".

Runs on the host because the server usually listens on 127.0.0.1 there. Stdlib only.
Usage: python http_get.py URL TIMEOUT_S. Status 0 means no HTTP answer (refused, timeout).
"""

import sys
import urllib.error
import urllib.request

url, timeout = sys.argv[1], float(sys.argv[2])
try:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (a URL we built)
        status = r.status
except urllib.error.HTTPError as e:
    status = e.code
except Exception as e:  # noqa: BLE001
    print(f"REMEDY-HTTP 0 {type(e).__name__}: {e}")
    sys.exit(0)
print(f"REMEDY-HTTP {status}")

"""Large values returned by a view, four calls at once (issue 15, item 1; benches/RESULTS.md).

Serves the hostile test module with `wasmod serve`, fills its `item` table with ROWS rows of
ROW_BYTES control characters (whose JSON is six times their encoding), then calls the anonymous
view `items` (every row) PARALLEL times at once while probing `/health`, first with the default
bound on returned values and then with the bound lifted (`--max-result-bytes 1GiB`). Prints the
answers, the time, the server's RSS before, at peak (VmHWM) and after, and the slowest `/health`.

    WASMOD=target/debug/wasmod WASM=<hostile.wasm> python3 benches/scripts/large_results.py 12 1000000 4

Python's standard library only; loopback only; each server is stopped at the end.
"""
import json, os, shutil, subprocess, sys, tempfile, threading, time, urllib.request, socket
WASMOD = os.environ.get("WASMOD", "target/debug/wasmod")
WASM = os.environ.get("WASM", "target/wasm-tests/wasm32-unknown-unknown/release/hostile.wasm")
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
def rss(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field): return int(line.split()[1]) // 1024
def post(url, body, token=None):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json", **({"authorization": "Bearer " + token} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=120) as r: return r.status, len(r.read())
    except urllib.error.HTTPError as e: return e.code, e.read()[:200]
def run(extra, rows, row_bytes, parallel):
    port = free_port(); data = tempfile.mkdtemp()
    p = subprocess.Popen([WASMOD, "serve", WASM, "--listen", f"127.0.0.1:{port}", "--data", data, "--max-body", "8MiB", "--identities-per-minute", "0", "--anonymous-calls-per-minute", "0"] + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try: urllib.request.urlopen(base + "/health", timeout=1); break
        except Exception: time.sleep(0.1)
    tok = json.loads(urllib.request.urlopen(urllib.request.Request(base + "/v1/identity", data=b"", method="POST")).read())["token"]
    name = "\u0001" * row_bytes
    for i in range(rows):
        st, _ = post(base + "/v1/reducers/add", [i, name], tok); assert st == 200, st
    before = rss(p.pid, "VmRSS")
    answers = []
    t0 = time.time()
    ths = [threading.Thread(target=lambda: answers.append(post(base + "/v1/views/items", []))) for _ in range(parallel)]
    health = []
    def probe():
        while any(t.is_alive() for t in ths):
            s = time.time(); urllib.request.urlopen(base + "/health", timeout=60).read(); health.append(time.time() - s); time.sleep(0.05)
    for t in ths: t.start()
    pr = threading.Thread(target=probe); pr.start()
    for t in ths: t.join()
    pr.join()
    took = time.time() - t0
    peak = rss(p.pid, "VmHWM"); after = rss(p.pid, "VmRSS")
    p.terminate(); p.wait(); shutil.rmtree(data, ignore_errors=True)
    statuses = sorted(set(str(a)[:60] for a in answers))
    print(f"{' '.join(extra) or 'default'}: table {rows}x{row_bytes} B, {parallel} view calls at once -> statuses {statuses}, {took:.1f} s; RSS before {before} MiB, peak {peak} MiB, after {after} MiB; /health worst {max(health or [0])*1000:.0f} ms over {len(health)} probes")
rows, row_bytes, parallel = map(int, sys.argv[1:4])
run([], rows, row_bytes, parallel)
run(["--max-result-bytes", "1GiB"], rows, row_bytes, parallel)

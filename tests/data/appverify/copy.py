"""Copy 64 MiB and print the rate (MB/s); the fourth run in this directory fails once (exit 1),
as a flaky job step would."""
import os, pathlib, time
n = pathlib.Path("/tmp/avrec/copy.count")
k = int(n.read_text()) + 1 if n.exists() else 1
n.write_text(str(k))
if k == 4:
    raise SystemExit("copy: lost the node (simulated)")
b = bytearray(os.urandom(1 << 20)) * 64
t = time.perf_counter()
c = bytes(b)
dt = time.perf_counter() - t
print(f"Copy: {len(b) / dt / 1e6:.1f} MB/s")

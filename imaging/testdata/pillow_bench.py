"""Times vLLM's image load (pillow_load.load) in this process: usage pillow_bench.py ITERS FILE...
Prints one line per file: "<file> <ns per load, wall> <ns per load, CPU of this process>"."""
import os, sys, time
sys.argv, argv = sys.argv[:1] + ["/dev/null"], sys.argv
here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, "pillow_load.py")).read().replace("\nmain()\n", "\n")
exec(compile(src, "pillow_load.py", "exec"))

iters = int(argv[1])
for path in argv[2:]:
    data = open(path, "rb").read()
    load(data)  # warm-up
    w0, c0 = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(iters):
        img, _ = load(data)
        img.tobytes()
    w1, c1 = time.perf_counter_ns(), time.process_time_ns()
    print(path, (w1 - w0) // iters, (c1 - c0) // iters)

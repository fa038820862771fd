"""Runs a Python script inside torch.profiler (Kineto) with CUDA
synchronization events on, as a user profiling their own program would,
and writes Kineto's Chrome trace: for the importer's tests of what such a
trace carries (cuda_sync events with wait_on_stream and
wait_on_cuda_event_record_corr_id, flow events, aten:: CPU operations).

Usage: python3 kineto_trace.py OUT.json SCRIPT.py [ARGS...]
"""
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    config = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    sys.argv = [script, *args]
    code = 0
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], experimental_config=config) as prof:
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            code = e.code or 0
    prof.export_chrome_trace(out)
    print(f"kineto_trace: {script} exit {code}, trace {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())

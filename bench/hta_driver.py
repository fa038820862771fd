#!/usr/bin/env python3
"""HTA's side of `npm run bench -- --only hta` (bench/hta.ts).

    python3 bench/hta_driver.py TRACE_DIR --out RESULT.json [--hta PATH]
    python3 bench/hta_driver.py --check [--hta PATH]

Meta's HolisticTraceAnalysis on a directory of Kineto traces, one per rank,
what its documentation runs for a job: TraceAnalysis(trace_dir=...) (the
trace load: every rank parsed, on a pool of min(cores, ranks) processes),
get_temporal_breakdown() and get_comm_comp_overlap(), plots off. Writes each
phase's wall time and, per rank, HTA's communication/computation overlap
(the share of the rank's communication kernel time during which a
computation kernel ran; HTA returns it in percent rounded to 0.01), with
the versions of HTA, pandas, numpy
and Python. --check only imports HTA and prints the versions (exit 3 when it
cannot be imported). --hta PATH puts a checkout of HTA first on the path.
"""
import argparse
import json
import os
import sys
import time


def versions(hta_path):
    import numpy
    import pandas

    hta_version = None
    try:
        from importlib.metadata import version

        hta_version = version("HolisticTraceAnalysis")
    except Exception:
        pass
    if hta_version is None:
        try:
            from hta.version import __version_tuple__

            hta_version = ".".join(str(p) for p in __version_tuple__)
        except Exception:
            hta_version = "unknown"
    import hta

    return {
        "hta": hta_version,
        "htaFrom": os.path.dirname(os.path.dirname(os.path.abspath(hta.__file__))),
        "htaPath": hta_path,
        "pandas": pandas.__version__,
        "numpy": numpy.__version__,
        "python": sys.version.split()[0],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace_dir", nargs="?")
    ap.add_argument("--out")
    ap.add_argument("--hta")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if args.hta:
        sys.path.insert(0, os.path.abspath(args.hta))
    try:
        from hta.trace_analysis import TraceAnalysis
    except Exception as e:  # ImportError, or a dependency's own error
        print(f"HTA cannot be imported: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(3)
    v = versions(args.hta)
    if args.check:
        print(json.dumps(v))
        return
    t0 = time.perf_counter()
    analysis = TraceAnalysis(trace_dir=args.trace_dir)
    t1 = time.perf_counter()
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    t2 = time.perf_counter()
    overlap = analysis.get_comm_comp_overlap(visualize=False)
    t3 = time.perf_counter()
    result = {
        "versions": v,
        "seconds": {"load": t1 - t0, "temporalBreakdown": t2 - t1, "commCompOverlap": t3 - t2},
        "ranks": [
            {"rank": int(r["rank"]), "overlap": float(r["comp_comm_overlap_pctg"]) / 100}
            for r in overlap.to_dict("records")
        ],
        "breakdown": [
            {
                "rank": int(r["rank"]),
                "idleUs": float(r["idle_time(us)"]),
                "computeUs": float(r["compute_time(us)"]),
                "nonComputeUs": float(r["non_compute_time(us)"]),
                "kernelUs": float(r["kernel_time(us)"]),
            }
            for r in breakdown.to_dict("records")
        ],
    }
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()

# The StreamScope Node addon (Node-API, ABI-stable: one build serves Node 22
# and Electron). SQLite is compiled from the amalgamation that ships inside
# the better-sqlite3 npm package, so no system SQLite or download is needed;
# its symbols stay hidden so they cannot clash with another SQLite in the
# process. CUDA, CUPTI and NVML are opened with dlopen at run time: the addon
# builds and loads on machines without them.
{
  "targets": [
    {
      "target_name": "streamscope_addon",
      "sources": [
        "src/addon.cc",
        "src/call_index.cc",
        "src/replay_scheduler.cc",
        "src/op_resources.cc",
        "src/dense_indices.cc",
        "src/graph_capture.cc",
        "src/issue_walk.cc",
        "src/duplex_work.cc",
        "src/latency_samples.cc",
        "src/launch_gaps.cc",
        "src/device_unions.cc",
        "src/memory_policy.cc",
        "src/file_map.cc",
        "src/device_inventory.cc",
        "src/cupti_info.cc",
        "src/ingest.cc",
        "src/ingest_binding.cc",
        "src/ingest_statements.cc",
        "src/insert_ceiling.cc",
        "src/payload_json.cc",
        "src/record_decoding.cc",
        "src/zone_builder.cc",
        "src/table_loader.cc",
        "src/page_merge.cc",
        "src/btree_reader.cc",
        "src/sql_time_limit.cc",
        "src/trace_import.cc",
        "../../node_modules/better-sqlite3/deps/sqlite3/sqlite3.c"
      ],
      "include_dirs": [
        "../../node_modules/node-addon-api",
        "../../node_modules/better-sqlite3/deps/sqlite3",
        "../collector"
      ],
      # NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: a worker thread stopped
      # while the addon loads a recording for it (the analysis thread closed
      # mid-analysis) makes every Node-API call fail; the error must then be
      # dropped, not escape as a C++ exception that aborts the whole process.
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "SQLITE_THREADSAFE=2",
        "SQLITE_DQS=0",
        "SQLITE_DEFAULT_MEMSTATUS=0",
        "SQLITE_OMIT_DEPRECATED",
        "SQLITE_OMIT_SHARED_CACHE",
        "SQLITE_LIKE_DOESNT_MATCH_BLOBS",
        # The column loader reads a recording's pages through SQLite's map of
        # the file (table_loader.cc): up to 1 TiB, not the default 2 GB.
        "SQLITE_MAX_MMAP_SIZE=0x10000000000",
        "SQLITE_API=__attribute__((visibility(\"hidden\")))"
      ],
      "cflags": ["-O2", "-fvisibility=hidden"],
      # -ffp-contract=off: no fused multiply-add, so that the replay's arithmetic
      # (src/replay_scheduler.cc) rounds as JavaScript's does, to the bit.
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra", "-fvisibility=hidden", "-ffp-contract=off"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      # simdjson: Debian's libsimdjson-dev (the Kineto importer's JSON parser, src/trace_import.cc).
      "libraries": ["-ldl", "-lpthread", "-lsimdjson"],
      # Found beside the addon first (native/build.sh copies it there), so the
      # addon loads on machines without libsimdjson installed.
      "ldflags": ["-Wl,-rpath,'$$ORIGIN'"]
    }
  ]
}

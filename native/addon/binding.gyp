# NOTE: reconstructed from build/streamscope_addon.target.mk — the original
# file was accidentally overwritten at 11:05:32 by a concurrently running
# helper session (which has since stopped writing in native/addon). The
# sources, defines, include dirs and flags are exactly those gyp generated
# from the original; comments in the original are lost.
{
  'targets': [
    {
      'target_name': 'streamscope_addon',
      'sources': [
        'src/addon.cc',
        'src/device_inventory.cc',
        'src/cupti_info.cc',
        'src/ingest.cc',
        'src/ingest_binding.cc',
        '../../node_modules/better-sqlite3/deps/sqlite3/sqlite3.c',
      ],
      'include_dirs': [
        '../../node_modules/node-addon-api',
        '../../node_modules/better-sqlite3/deps/sqlite3',
        '../collector',
      ],
      'defines': [
        'NAPI_VERSION=8',
        'NAPI_CPP_EXCEPTIONS',
        'SQLITE_THREADSAFE=2',
        'SQLITE_DQS=0',
        'SQLITE_DEFAULT_MEMSTATUS=0',
        'SQLITE_OMIT_DEPRECATED',
        'SQLITE_OMIT_SHARED_CACHE',
        'SQLITE_LIKE_DOESNT_MATCH_BLOBS',
        'SQLITE_DEFAULT_WAL_SYNCHRONOUS=1',
      ],
      'cflags': ['-O2'],
      'cflags!': ['-fno-exceptions'],
      'cflags_cc!': ['-fno-exceptions', '-fno-rtti', '-std=gnu++17', '-std=gnu++20'],
      'cflags_cc': ['-std=c++17', '-O2', '-Wall', '-Wextra'],
      'libraries': ['-ldl', '-lpthread'],
    },
  ],
}

// The collector's signal handling: what a signal does to a recording, and
// that the target then behaves as it would have without StreamScope.
//
// SIGINT and SIGTERM: everything delivered so far goes to disk (a Flush
// record, kFlushSignal), then the target behaves exactly as it would have:
//  * previous disposition a handler (Python's SIGINT → KeyboardInterrupt):
//    called from ours at once; the writer only flushes;
//  * SIG_DFL: the writer thread, after the flush, restores SIG_DFL and
//    re-raises, so the process dies of the signal as it would have; a second
//    signal while that flush is pending kills at once;
//  * SIG_IGN: the writer only flushes.
// SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: the flush is handed to the writer
// thread and waited for (bounded), then the previous disposition takes over.
// A target that installs its own handler after us replaces ours: its choice.
//
// The handlers only touch atomics and make async-signal-safe calls; the
// flush itself happens on the writer thread (stream_writer.h).
#pragma once

#include <sys/types.h>

#include <atomic>

namespace streamscope {

class StreamWriter;

namespace signals {

// Installs the handlers, once, at the end of setup. While `collecting` is
// true, in process `pid`, a signal is handed to `writer`; otherwise (before
// setup ends, during and after exit, in a forked child) the handler does
// what the previous disposition would have done. `writer` and `collecting`
// must stay valid for the life of the process: the collector's state is
// never freed.
void install(StreamWriter* writer, pid_t pid, const std::atomic<bool>* collecting);

// On the writer thread, once the flush a signal asked for is on disk: what
// StreamWriter::start takes as after_signal_flush.
void afterFlush(int sig);

}  // namespace signals
}  // namespace streamscope

#include "signals.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "stream_writer.h"

namespace streamscope::signals {
namespace {

constexpr int kSignals[2] = {SIGINT, SIGTERM};
int signalIndex(int sig) { return sig == SIGINT ? 0 : 1; }
// Signals of a crashing target: before it dies, what CUPTI has delivered is
// flushed (best effort, bounded wait), then the signal takes its course.
constexpr int kCrashSignals[5] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
int crashIndex(int sig) {
  for (int i = 0; i < 5; i++)
    if (kCrashSignals[i] == sig) return i;
  return -1;
}

// What the handlers read, in signal context. Trivially destructible, so it
// stays usable during and after the process's static destruction.
struct State {
  StreamWriter* writer = nullptr;
  pid_t pid = 0;
  const std::atomic<bool>* collecting = nullptr;
  struct sigaction previous[2] = {};        // SIGINT, SIGTERM as they were before us
  struct sigaction previous_crash[5] = {};  // kCrashSignals as they were before us
  std::atomic<bool> crashing{false};        // the first crash signal is being handled
  std::atomic<bool> crash_flushed{false};   // the writer has put everything delivered on disk
};
State state;

bool recording() { return state.collecting->load(std::memory_order_acquire) && getpid() == state.pid; }

bool isDefault(const struct sigaction& sa) { return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL; }
bool isIgnore(const struct sigaction& sa) { return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN; }

// Async-signal-safe: sigaction and raise are.
void dieOfSignal(int sig) {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // blocked while this handler runs; delivered when it returns
}

// The handler: async-signal-safe calls only (getpid, atomics, sigaction,
// raise), plus the previous handler, which was written for signal context.
void onSignal(int sig, siginfo_t* info, void* uctx) {
  const int saved_errno = errno;
  const struct sigaction& prev = state.previous[signalIndex(sig)];
  if (recording()) {
    const bool again = state.writer->signalPending();
    state.writer->signalArrived(sig);
    if (again && isDefault(prev)) dieOfSignal(sig);  // the user insists: do not wait for the flush
  } else if (isDefault(prev)) {
    dieOfSignal(sig);  // exiting, or a forked child: no flush to wait for
  }
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, uctx);
  } else if (!isDefault(prev) && !isIgnore(prev) && prev.sa_handler) {
    prev.sa_handler(sig);
  }
  errno = saved_errno;
}

// A crash: hand the flush to the writer thread and wait for it, at most
// kCrashWaitMs (the crash may have happened while CUDA or CUPTI held a lock
// the flush needs; then we give up rather than hang). Then the previous
// disposition is restored: a fault re-executes and dies as it would have,
// abort() and sent signals are raised again.
constexpr int kCrashWaitMs = 3000;
void onCrash(int sig, siginfo_t* info, void* /*uctx*/) {
  const int i = crashIndex(sig);
  if (recording() && !state.crashing.exchange(true)) {
    state.writer->signalArrived(sig);
    const struct timespec step = {0, 5 * 1000 * 1000};
    for (int waited = 0; waited < kCrashWaitMs && !state.crash_flushed.load(std::memory_order_acquire); waited += 5) {
      nanosleep(&step, nullptr);
    }
  }
  sigaction(sig, &state.previous_crash[i], nullptr);
  if (info == nullptr || info->si_code <= 0) raise(sig);  // sent (kill, abort): deliver again on return
}

}  // namespace

void afterFlush(int sig) {
  if (crashIndex(sig) >= 0) {
    state.crash_flushed.store(true, std::memory_order_release);  // the crashing thread is waiting for this
    return;
  }
  if (!isDefault(state.previous[signalIndex(sig)])) return;
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);  // this thread blocks it (see StreamWriter::start)
  kill(getpid(), sig);
}

void install(StreamWriter* writer, pid_t pid, const std::atomic<bool>* collecting) {
  state.writer = writer;
  state.pid = pid;
  state.collecting = collecting;
  for (int sig : kSignals) {
    struct sigaction& prev = state.previous[signalIndex(sig)];
    if (sigaction(sig, nullptr, &prev) != 0) continue;
    struct sigaction sa = {};
    sa.sa_sigaction = onSignal;
    if (isDefault(prev) || isIgnore(prev)) {
      // The target never saw this signal interrupt a system call: restart them.
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
    } else {
      // Keep the previous handler's behaviour: its mask, whether system
      // calls restart (Python relies on EINTR to run its handlers), its stack.
      sa.sa_flags = SA_SIGINFO | (prev.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER));
      sa.sa_mask = prev.sa_mask;
    }
    sigaction(sig, &sa, nullptr);
  }
  for (int sig : kCrashSignals) {
    struct sigaction& prev = state.previous_crash[crashIndex(sig)];
    if (sigaction(sig, nullptr, &prev) != 0 || isIgnore(prev)) continue;
    struct sigaction sa = {};
    sa.sa_sigaction = onCrash;
    // SA_ONSTACK: a stack overflow still finds a stack if the target set one up.
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace streamscope::signals

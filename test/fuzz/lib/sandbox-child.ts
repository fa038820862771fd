// The child side of sandbox.ts: loads the handler module once, runs its
// setup, then answers each input with what `handle` returned. A handler
// describes what the code under test did (a result, or the error it threw)
// as plain data; an exception out of `handle` itself is the harness's bug
// and ends the process.
interface Handler {
  setup?: (options: unknown) => Promise<unknown> | unknown;
  handle: (input: unknown) => Promise<unknown>;
  teardown?: () => Promise<void> | void;
}

const send = (m: unknown) => process.send!(m);
let mod: Handler;
try {
  mod = (await import(process.env.STREAMSCOPE_FUZZ_HANDLER!)) as Handler;
  const setupValue = await mod.setup?.(JSON.parse(process.env.STREAMSCOPE_FUZZ_SETUP ?? 'null'));
  send({ ready: true, setupValue });
} catch (err) {
  send({ setupError: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
}

process.on('message', (m: { input?: unknown; close?: boolean }) => {
  if (m.close) {
    void Promise.resolve(mod.teardown?.()).finally(() => process.exit(0));
    return;
  }
  void mod.handle(m.input).then((answer) => send({ answer }));
});
// The parent gone (killed, ended): so is this process.
process.on('disconnect', () => process.exit(0));

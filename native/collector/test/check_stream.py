#!/usr/bin/env python3
"""Decodes one record stream (record_format.h) and checks what a scenario of
run-fake-cupti-tests.sh expects. Exit status 0 when all checks pass."""
import struct
import sys

KINDS = ['', 'String', 'Process', 'Device', 'Context', 'Stream', 'Kernel', 'Memcpy', 'Memset', 'Synchronization',
         'CudaEvent', 'ApiCall', 'Marker', 'Overhead', 'Dropped', 'Error', 'Flush', 'End', 'ProcessEnv']


def decode(path):
    b = open(path, 'rb').read()
    magic, version, header_bytes, origin, wall, pid, flags, cv = struct.unpack_from('<8sIIQQIII', b, 0)
    assert magic == b'SSCOPERS' and version == 1 and header_bytes == 64, 'bad header'
    at, recs, strings = 64, [], {}
    while at < len(b):
        kind, _, size = struct.unpack_from('<HHI', b, at)
        assert size >= 8 and size % 8 == 0 and at + size <= len(b), f'corrupt or cut record at byte {at}'
        name = KINDS[kind]
        r = {'kind': name}
        if name == 'String':
            sid, n = struct.unpack_from('<II', b, at + 8)
            strings[sid] = b[at + 16:at + 16 + n].decode()
        elif name == 'Stream':
            r.update(zip(['context_id', 'stream_id', 'device_id', 'flags', 'priority'], struct.unpack_from('<IIIIi', b, at + 8)))
        elif name == 'Kernel':
            r['correlation_id'] = struct.unpack_from('<I', b, at + 8 + 16 + 12)[0]
        elif name == 'Device':
            r['name_sid'] = struct.unpack_from('<I', b, at + 12)[0]
            r['uuid'] = b[at + 16:at + 32].hex()
        elif name == 'Dropped':
            r.update(zip(['count', 'source', 'context_id', 'stream_id'], struct.unpack_from('<QIII', b, at + 8)))
        elif name == 'Error':
            code, sid = struct.unpack_from('<II', b, at + 8)
            r.update(code=code, message=strings.get(sid))
        elif name == 'Flush':
            r.update(zip(['reason', 'signal', 'at_ns', 'records_so_far'], struct.unpack_from('<IIqQ', b, at + 8)))
        elif name == 'End':
            r.update(zip(['reason', '_', 'end_ns', 'records_written', 'buffers_completed'], struct.unpack_from('<IIqQQ', b, at + 8)))
        elif name == 'ProcessEnv':
            name_sid, value_sid = struct.unpack_from('<II', b, at + 8)
            r.update(name=strings.get(name_sid), value=strings.get(value_sid))
        elif name == 'ApiCall':
            r['name'] = strings.get(struct.unpack_from('<I', b, at + 8 + 16 + 20)[0])
        recs.append(r)
        at += size
    return {'flags': flags, 'pid': pid, 'records': recs, 'strings': strings}


def main():
    path, scenario = sys.argv[1], sys.argv[2]
    s = decode(path)
    recs = s['records']
    kinds = [r['kind'] for r in recs]
    count = lambda k: kinds.count(k)
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    errors = [r for r in recs if r['kind'] == 'Error']
    flushes = [r for r in recs if r['kind'] == 'Flush']
    drops = [r for r in recs if r['kind'] == 'Dropped']
    end = recs[-1] if recs and recs[-1]['kind'] == 'End' else None

    if scenario in ('other', 'old-cupti'):
        expect(kinds[-1] == 'End', 'ends with End')
        code = 1 if scenario == 'other' else 2
        expect(len(errors) == 1 and errors[0]['code'] == code, f'one Error of code {code}: {errors}')
        if scenario == 'other':
            expect('another CUPTI client is active in this process: CUPTI for Nsight Systems' in (errors[0]['message'] or ''),
                   f'message names the other client: {errors}')
        expect(count('Kernel') == 0 and count('Device') == 0, 'nothing else recorded')
    else:
        expect(count('Device') == 1 and count('Context') == 1, 'one Device and one Context')
        streams = {r['stream_id']: r for r in recs if r['kind'] == 'Stream'}
        # Created streams come from CUPTI's STREAM activity records, which
        # discard mode throws away with every other activity buffer.
        want = {7} if scenario == 'discard' else {7, 13, 14}
        expect(set(streams) == want, f'streams {sorted(want)}: {sorted(streams)}')
        if 13 in streams:
            expect(streams[13]['flags'] == 2 and streams[13]['priority'] == -1, 'stream 13 non-blocking, priority -1')
        if 7 in streams:
            expect(streams[7]['flags'] == 1, 'stream 7 legacy default')
        expect(any(e['code'] == 3 and 'OVERHEAD' in (e['message'] or '') for e in errors), 'the OVERHEAD enable failure is reported')
        expect(all(e['code'] == 3 for e in errors), f'no other errors: {errors}')
        names = {r.get('name') for r in recs if r['kind'] == 'ApiCall'}
        expect(names <= {'cudaLaunchKernel'}, f'runtime API names stripped of their version: {names}')

    envs = [(r['name'], r['value']) for r in recs if r['kind'] == 'ProcessEnv']
    env_names = [n for n, _ in envs]
    expect(len(env_names) == len(set(env_names)), f'each variable once: {env_names}')
    if envs:
        # Strings aside: the String records of their names and values come between them.
        nonstring = [k for k in kinds if k != 'String']
        first = nonstring.index('ProcessEnv')
        expect(nonstring[first - 1] == 'Process' and nonstring[first:first + len(envs)] == ['ProcessEnv'] * len(envs),
               'ProcessEnv records right after the first Process record')
    if scenario == 'exit':
        # run-fake-cupti-tests.sh sets a torchrun rank's variables, an empty one and one the collector does not read.
        got = dict(envs)
        want = {'RANK': '3', 'LOCAL_RANK': '1', 'WORLD_SIZE': '8', 'CUDA_VISIBLE_DEVICES': ''}
        expect(all(got.get(k) == v for k, v in want.items()), f'the launcher variables as set: {got}')
        expect('STREAMSCOPE_TEST_NOT_READ' not in got, 'no variable outside process_env.h')

    kernels = [r['correlation_id'] for r in recs if r['kind'] == 'Kernel']
    if scenario == 'exit':
        expect(kernels == list(range(1, 20101)), f'all 20100 kernels in order (got {len(kernels)})')
        expect(any(f['reason'] == 3 for f in flushes), 'a Flush record for cuProfilerStop')
        expect(end is not None, 'ends with End')
    if scenario == 'discard':
        expect(s['flags'] == 1, 'header flag kHeaderDiscard')
        expect(count('Kernel') == 0 and count('ApiCall') == 0, 'no activity records in discard mode')
        expect(end is not None, 'ends with End')
    if scenario == 'sigterm-default':
        expect(kernels == list(range(1, 20001)), f'all 20000 kernels before the signal are on disk (got {len(kernels)})')
        expect(any(f['reason'] == 2 and f['signal'] == 15 for f in flushes), 'Flush record kFlushSignal, SIGTERM')
        expect(end is None, 'no End record (the process died of the signal)')
    if scenario in ('sigint-handler', 'sigint-ignored'):
        expect(kernels == list(range(1, 20001)), f'all 20000 kernels (got {len(kernels)})')
        expect(any(f['reason'] == 2 and f['signal'] == 2 for f in flushes), 'Flush record kFlushSignal, SIGINT')
        expect(end is not None, 'ends with End (the process exited normally)')
    if scenario == 'fork':
        expect(end is not None and count('End') == 1, 'one End, the parent\'s')
    if scenario in ('segv', 'abort'):
        sig = 11 if scenario == 'segv' else 6
        expect(kernels == list(range(1, 20001)), f'all 20000 kernels flushed when the target crashed (got {len(kernels)})')
        expect(any(f['reason'] == 2 and f['signal'] == sig for f in flushes), f'Flush record kFlushSignal, signal {sig}')
        expect(end is None, 'no End record (the process died of the signal)')
    if scenario == 'sigkill':
        expect(kernels == list(range(1, 20001)), f'all 20000 kernels delivered before SIGKILL are on disk (got {len(kernels)})')
        expect(end is None, 'no End record')
    if scenario == 'cap':
        expect(any(d['source'] == 2 and d['count'] >= 1 for d in drops), f'Dropped kDropBufferCap: {drops}')
        expect(any(d['source'] == 1 and d['count'] == 10 for d in drops), f'Dropped kDropCupti of 10: {drops}')
        expect(end is not None, 'ends with End')
    if end is not None:
        expect(end['records_written'] == len(recs) - 1, f"End.records_written {end['records_written']} == {len(recs) - 1}")
        expect(count('Process') == (1 if scenario in ('other', 'old-cupti') else 2), 'Process at start and at exit')

    if problems:
        for p in problems:
            print(f'  FAIL {scenario}: {p}')
        sys.exit(1)
    print(f'  ok   {scenario}: {len(recs)} records, {len(kernels)} kernels')


main()

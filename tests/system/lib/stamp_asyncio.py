#!/usr/bin/env python3
"""stamp_asyncio.py server PORT COUNT | client HOST PORT COUNT SEED

An asyncio echo exchange over TCP, the way an event-driven FIX engine
talks: the client sends COUNT messages (4-byte length, then 1..60000
random bytes, in bursts, without waiting), the server echoes each back,
the client reads the echoes and checks them against what it sent
(SHA-256 of both streams). The event loop is asyncio's own on epoll,
watched the way an engine watches it: an EPOLLERR on a socket is a dead
connection (the program exits 3 naming the descriptor and SO_ERROR).
Prints "client ok MESSAGES BYTES SHA" / "server ok MESSAGES BYTES SHA"."""
import asyncio, hashlib, random, select, selectors, socket, struct, sys


class Watched:
    """select.epoll, with each EPOLLERR taken as a broken connection."""

    def __init__(self, ep):
        self._ep = ep

    def poll(self, *args, **kw):
        events = self._ep.poll(*args, **kw)
        for fd, ev in events:
            if ev & select.EPOLLERR:
                s = socket.socket(fileno=fd)
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                s.detach()
                sys.stderr.write('EPOLLERR on fd %d (SO_ERROR %d): connection '
                                 'taken for dead\n' % (fd, err))
                sys.exit(3)
        return events

    def __getattr__(self, name):
        return getattr(self._ep, name)


class Selector(selectors.EpollSelector):
    def __init__(self):
        super().__init__()
        self._selector = Watched(self._selector)


async def read_msg(reader):
    hdr = await reader.readexactly(4)
    (n,) = struct.unpack('!I', hdr)
    return hdr + await reader.readexactly(n)


async def server(port, count):
    done = asyncio.get_running_loop().create_future()

    async def serve(reader, writer):
        h, total = hashlib.sha256(), 0
        for _ in range(count):
            m = await read_msg(reader)
            h.update(m)
            total += len(m)
            writer.write(m)
            await writer.drain()
        writer.close()
        await writer.wait_closed()
        done.set_result((total, h.hexdigest()))

    srv = await asyncio.start_server(serve, '0.0.0.0', port)
    print('listening', flush=True)
    total, sha = await done
    srv.close()
    print('server ok %d %d %s' % (count, total, sha), flush=True)


async def client(host, port, count, seed):
    rnd = random.Random(seed)
    reader, writer = await asyncio.open_connection(host, port)
    sent, got = hashlib.sha256(), hashlib.sha256()
    total = 0

    async def send():
        for i in range(count):
            n = rnd.choice((rnd.randint(1, 200), rnd.randint(200, 60000)))
            m = struct.pack('!I', n) + rnd.randbytes(n)
            sent.update(m)
            writer.write(m)
            if i % 16 == 15:
                await writer.drain()
        await writer.drain()

    async def recv():
        nonlocal total
        for _ in range(count):
            m = await read_msg(reader)
            got.update(m)
            total += len(m)

    await asyncio.gather(send(), recv())
    writer.close()
    await writer.wait_closed()
    if sent.digest() != got.digest():
        sys.stderr.write('echo differs from what was sent\n')
        sys.exit(1)
    print('client ok %d %d %s' % (count, total, got.hexdigest()), flush=True)


def main():
    loop = asyncio.SelectorEventLoop(Selector())
    asyncio.set_event_loop(loop)
    if sys.argv[1] == 'server':
        loop.run_until_complete(server(int(sys.argv[2]), int(sys.argv[3])))
    else:
        loop.run_until_complete(client(sys.argv[2], int(sys.argv[3]),
                                       int(sys.argv[4]), int(sys.argv[5])))


main()

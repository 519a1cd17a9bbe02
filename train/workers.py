"""The local worker pool shared by the trainers that value positions in other processes
(train/bid_q/, train/exit/)."""

from __future__ import annotations


def in_processes(items, count: int, workers: int, start, args: tuple, work):
    """work(item) of each of `count` items, in order: in min(workers, count) spawned processes
    each set up by start(*args), or here (start called here) for 1 worker or 1 item."""
    if workers > 1 and count > 1:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        with context.Pool(min(workers, count), initializer=start, initargs=args) as pool:
            yield from pool.imap(work, items)
    else:
        start(*args)
        yield from map(work, items)

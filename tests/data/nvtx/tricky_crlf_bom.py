#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Tricky module for the NVTX engine tests.

Its docstring spans lines.
"""
from __future__ import annotations
from __future__ import division

import os, sys
x = 1; y = 2; z = 3
if x: print(x)
elif y: print(y)
else:
    print(z)

TEXT = """line one
    indented data line
line three"""
S2 = 'single \
continued'


def plain(a, b):
    """Docstring stays outside."""
    global TEXT
    total = a + \
        b
    values = [
        a,
            b,  # odd indentation inside brackets
    ]
    # a comment between statements

    if total > 3:
        total -= 1
    elif total < 0:
        total = 0
    else:
        pass
    try:
        os.getcwd()
    except OSError as e:
        raise RuntimeError(e) from e
    finally:
        values.append(total)
    while False: break
    for i in range(2): total += i
    with open(os.devnull) as fh: fh.read()
    return values


def one_liner(a): return a * 2


def one_liner_multi(a): x = a; return (x,
    a)


async def coro(n):
    async with ctx() as c:
        await c.run(n)
    async for item in aiter(n):
        yield item


def gen():
    yield 1
    yield from range(3)


def outer():
    v = 0
    def inner():
        nonlocal v
        v += 1
        return v
    class Local:
        def method(self):
            return inner()
    return Local().method()


class Klass:
    """Class doc."""
    attr = 1

    @property
    def prop(self):
        return self.attr

    @prop.setter
    def prop(self, v):
        self.attr = v

    @staticmethod
    def s(): pass


def matcher(cmd):
    match cmd:
        case [a, b]:
            return a + b
        case {"k": v}:
            return v
        case _:
            return None


def walrus(xs):
    if (n := len(xs)) > 2:
        return n
    return [z for y in xs if (z := y * 2)]


def strings():
    doc = f"""formatted {os.sep}
  keeps {len('x')} indentation
"""
    raw = r'''raw \n
  text'''
    return doc + raw


def unicode_name_héllo():
    π = 3.14159
    return π


lam = lambda q: q + 1

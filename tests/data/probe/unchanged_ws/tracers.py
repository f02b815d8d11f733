"""A program with its own sys.settrace / sys.setprofile (as debuggers and coverage have)."""
import sys
import threading

import torch

import wslib

calls = {}
profiled = {}


def tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.endswith("wslib.py"):
        calls[frame.f_code.co_name] = calls.get(frame.f_code.co_name, 0) + 1
        return line_tracer
    return None


lines = []


def line_tracer(frame, event, arg):
    if event == "line":
        lines.append(frame.f_lineno)
    return line_tracer


def profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.endswith("wslib.py"):
        profiled[frame.f_code.co_name] = profiled.get(frame.f_code.co_name, 0) + 1


def work():
    x = torch.ones(2)
    for _ in range(3):
        x = wslib.scale(wslib.square(x), 0.5)
    return x


def main():
    print("before", sys.gettrace() is None, sys.getprofile() is None)
    sys.settrace(tracer)
    sys.setprofile(profiler)
    threading.settrace(tracer)
    print("gettrace is mine", sys.gettrace() is tracer, threading.gettrace() is tracer)
    x = work()
    t = threading.Thread(target=work)
    t.start()
    t.join()
    sys.settrace(None)
    sys.setprofile(None)
    threading.settrace(None)
    print("after", sys.gettrace() is None, sys.getprofile() is None)
    print("result", x.tolist())
    print("calls", sorted(calls.items()))
    print("profiled", sorted(profiled.items()))
    print("lines", sorted(set(lines)))


if __name__ == "__main__":
    main()

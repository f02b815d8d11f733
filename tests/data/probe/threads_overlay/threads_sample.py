"""Two Python threads launching work (probe tests)."""
import threading

import torch


def worker(n):
    a = torch.randn(n, n, device="cpu")
    for _ in range(3):
        with torch.cuda.nvtx.range("kl:threads_sample.py:10-10"):
            b = a @ a
    return b


def main():
    t = threading.Thread(target=worker, args=(48,), name="kl-worker")
    t.start()
    x = torch.randn(16, 16, device="cpu")
    for _ in range(2):
        with torch.cuda.nvtx.range("kl:threads_sample.py:19-19"):
            y = torch.relu(x @ x)
    t.join()
    print("threads done", float(y.sum()))


if __name__ == "__main__":
    main()

"""A few word_language_model training steps on random tokens, tiny config, CPU (kernlens test
entry; the step follows upstream main.py's train()).
usage: python3 train_tiny.py [--model LSTM|GRU|Transformer] [--steps N] [--forward-only]"""
import argparse

import torch
import torch.nn as nn

import model as model_lib


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def train_step(model, criterion, data, targets, hidden, ntokens, lr, clip):
    model.zero_grad()
    if hidden is None:
        output = model(data)
        output = output.view(-1, ntokens)
    else:
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    return loss, hidden


@torch.no_grad()
def evaluate(model, criterion, data, targets, hidden, ntokens):
    model.eval()
    if hidden is None:
        output = model(data).view(-1, ntokens)
    else:
        output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    model.train()
    return loss, hidden


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="LSTM")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--forward-only", action="store_true")
    args = p.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ntokens, emsize, nhid, nlayers, bptt, batch = 50, 32, 32, 2, 8, 4
    if args.model == "Transformer":
        model = model_lib.TransformerModel(ntokens, emsize, 2, nhid, nlayers, 0.2)
    else:
        model = model_lib.RNNModel(args.model, ntokens, emsize, nhid, nlayers, 0.2)
    model = model.to(device)
    criterion = nn.NLLLoss()
    source = torch.randint(ntokens, (bptt * (args.steps + 1) + 1, batch)).to(device)
    hidden = None if args.model == "Transformer" else model.init_hidden(batch)
    for step, i in enumerate(range(0, bptt * args.steps, bptt)):
        data, targets = get_batch(source, i, bptt)
        if args.forward_only:
            loss, hidden = evaluate(model, criterion, data, targets, hidden, ntokens)
        else:
            loss, hidden = train_step(model, criterion, data, targets, hidden, ntokens, 20.0, 0.25)
        print("step %d loss %.4f" % (step, loss.item()))


if __name__ == "__main__":
    main()

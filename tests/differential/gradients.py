"""The differential suite's derivatives: rune::grad of sum(p(x) * w) in
float64 against PyTorch's autograd of the same function, where PyTorch is
installed (make bench installs it; the test suite does not need it).
NaN-ness and infinities must agree exactly, values to 1e-10 relative (the
formulas may differ in their roundings); the signs of zero derivatives are
not compared."""
import numpy as np

from values import decode


def torch_functions(torch):
    unary = {
        'neg': torch.neg, 'abs': torch.abs, 'sign': torch.sign, 'exp': torch.exp, 'exp2': torch.exp2,
        'log': torch.log, 'log2': torch.log2, 'log1p': torch.log1p, 'expm1': torch.expm1, 'sqrt': torch.sqrt,
        'rsqrt': torch.rsqrt, 'sin': torch.sin, 'cos': torch.cos, 'tan': torch.tan, 'tanh': torch.tanh,
        'sinh': torch.sinh, 'cosh': torch.cosh, 'asin': torch.asin, 'acos': torch.acos, 'atan': torch.atan,
        'erf': torch.erf, 'floor': torch.floor, 'ceil': torch.ceil, 'round': torch.round,
        'sigmoid': torch.sigmoid, 'cholesky': torch.linalg.cholesky,
    }
    binary = {
        'add': torch.add, 'sub': torch.sub, 'mul': torch.mul, 'div': torch.div, 'pow': torch.pow,
        'maximum': torch.maximum, 'minimum': torch.minimum, 'atan2': torch.atan2, 'mod': torch.fmod,
        'matmul': torch.matmul, 'solve': torch.linalg.solve,
    }
    reduce = {
        'reduce_sum': lambda x, axes: torch.sum(x, dim=axes),
        'reduce_prod': lambda x, axes: torch.prod(x, dim=axes[0]),
        'reduce_max': lambda x, axes: torch.amax(x, dim=axes),
        'reduce_min': lambda x, axes: torch.amin(x, dim=axes),
    }
    return unary, binary, reduce


def torch_grads(torch, record, functions):
    unary, binary, reduce = functions
    prim = record['prim']
    xs = [torch.tensor(decode(o).array, dtype=torch.float64, requires_grad=True) for o in record['operands']]
    w = torch.tensor(decode(record['weights']).array, dtype=torch.float64)
    if prim in unary:
        y = unary[prim](xs[0])
    elif prim in binary:
        y = binary[prim](xs[0], xs[1])
    elif prim in reduce:
        y = reduce[prim](xs[0], record['params']['axes'])
    else:
        return None
    (y * w).sum().backward()
    return [x.grad.numpy() if x.grad is not None else np.zeros(tuple(x.shape)) for x in xs]


def mismatch_kinds(got, want):
    kind = np.full(got.shape, None, dtype=object)
    kind[np.isnan(got) != np.isnan(want)] = 'nan'
    both = ~np.isnan(got) & ~np.isnan(want)
    kind[both & (np.isinf(got) | np.isinf(want)) & (got != want)] = 'inf'
    finite = both & np.isfinite(got) & np.isfinite(want)
    with np.errstate(invalid='ignore', over='ignore'):
        off = np.abs(got - want) > 1e-10 * np.maximum(np.abs(want), np.abs(got)) + 1e-300
    kind[finite & off] = 'value'
    return kind


def check(records, tally):
    """Adds the derivatives' mismatches to the tally; gives whether they
    were checked and a line saying so."""
    try:
        import torch
    except ImportError:
        return False, 'differential: derivatives skipped: python3-torch is absent (make bench installs it)'
    functions = torch_functions(torch)
    checked = 0
    for record in records:
        key = 'grad:' + record['prim']
        if 'error' in record:
            tally.add(key, 'float64', 'error', 1, 'rune: ' + record['error'])
            continue
        want = torch_grads(torch, record, functions)
        if want is None:
            raise SystemExit('differential: no PyTorch function for the derivative of ' + record['prim'])
        checked += 1
        operands = [decode(o) for o in record['operands']]
        for i, g in enumerate(record['grads']):
            got = decode(g).array
            kind = mismatch_kinds(got, want[i])
            for k in ('nan', 'inf', 'value'):
                at = np.flatnonzero(kind.ravel() == k)
                if at.size:
                    j = at[0]
                    inputs = ', '.join('%r' % o.array.ravel()[j % o.array.size].item() for o in operands)
                    tally.add(key, 'float64', k, int(at.size),
                              'operand %d at %d (operands %s): rune %r, PyTorch %r'
                              % (i, j, inputs, got.ravel()[j].item(), want[i].ravel()[j].item()))
    return True, 'differential: %d derivative cases against PyTorch %s (float64 autograd)' % (checked, torch.__version__)

#!/usr/bin/env python3
"""The layers of docs/design.md, checked from the includes of every source
file: a file may include its own layer's headers, those of the layers below
it, and the public headers (include/rune, which include nothing else).

    ops <- ir <- ad, batch <- constructs <- jit <- tools, capi
    ops <- ir <- vm <- jit

(ad and batch are siblings, as are constructs and vm: neither includes the
other.) Two declarations of ir/ are defined above it, by design, and only
there: LINK_TIME_EXCEPTIONS names them, and the test checks that each is
declared and defined where it says.

    check_layers.py SOURCE_ROOT
"""
import os
import re
import sys

BELOW = {
    'ops': set(),
    'ir': {'ops'},
    'ad': {'ops', 'ir'},
    'batch': {'ops', 'ir'},
    'constructs': {'ops', 'ir', 'ad', 'batch'},
    'vm': {'ops', 'ir'},
    'jit': {'ops', 'ir', 'ad', 'batch', 'constructs', 'vm'},
    'capi': {'ops', 'ir', 'ad', 'batch', 'constructs', 'vm', 'jit'},
    'tools': {'ops', 'ir', 'ad', 'batch', 'constructs', 'vm', 'jit'},
}

# (declared in, the declaration, defined in, the definition's start)
LINK_TIME_EXCEPTIONS = [
    ('ir/construct.hpp', 'const ConstructRules& construct_rules(OpKind kind);',
     'constructs/table.cpp', 'const ConstructRules& construct_rules(OpKind kind) {'),
    ('ir/eval.hpp', 'std::vector<nx::Tensor> run_construct(const Equation& eq, std::span<const nx::Tensor> inputs);',
     'vm/executor.cpp', 'std::vector<nx::Tensor> run_construct(const Equation& eq, std::span<const nx::Tensor> inputs) {'),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = ('.cpp', '.hpp', '.h', '.def')


def includes(path):
    with open(path, errors='replace') as f:
        return INCLUDE.findall(f.read())


def main():
    root = sys.argv[1]
    problems = []
    checked = 0
    for layer, below in BELOW.items():
        for folder, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(folder, name)
                checked += 1
                for target in includes(path):
                    top = target.split('/')[0]
                    if top in BELOW and top != layer and top not in below:
                        problems.append('%s includes %s: %s is not below %s' %
                                        (os.path.relpath(path, root), target, top, layer))
    for folder, _, files in os.walk(os.path.join(root, 'include')):
        for name in files:
            path = os.path.join(folder, name)
            checked += 1
            for target in includes(path):
                if not target.startswith('rune/'):
                    problems.append('%s (a public header) includes %s' % (os.path.relpath(path, root), target))
    for declared_in, declaration, defined_in, definition in LINK_TIME_EXCEPTIONS:
        for path, text in ((declared_in, declaration), (defined_in, definition)):
            with open(os.path.join(root, path)) as f:
                if text not in f.read():
                    problems.append('%s no longer holds `%s`: update LINK_TIME_EXCEPTIONS' % (path, text))
    for p in problems:
        print('FAIL:', p)
    if not problems:
        print('%d files: every include is of its own layer, one below it or a public header; %d link-time '
              'exceptions where they are named' % (checked, len(LINK_TIME_EXCEPTIONS)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Checks that the docs name only flags, files and links that exist.

Usage: check-docs.py SOURCE_DIR BIN_DIR

Reads README.md and every docs/**/*.md page (the TableGen references in
docs/reference are generated and checked elsewhere) and reports, one located
line each:
  - a Piper tool flag (`piper-run --lr`) in a shell block or an inline code
    span that the tool's `--help-hidden` does not list;
  - a repository path (examples/..., scripts/..., test/..., bench/...,
    docs/..., data/..., tools/..., lib/..., runtime/..., include/...) that
    does not exist;
  - a relative Markdown link whose target does not exist.
Exits 1 when anything is reported: docs that contradict the code are a
defect the suite catches, not something a reader discovers.
"""
import os
import re
import subprocess
import sys

TOOLS = ("piper-opt", "piper-gen", "piper-interp", "piper-compile",
         "piper-run", "piper-directives", "piper-schedule", "piper-ckpt",
         "piper-calibrate")
REPO_DIRS = ("examples/", "scripts/", "test/", "bench/", "docs/", "data/",
             "tools/", "lib/", "runtime/", "include/", "python/", "cmake/")
FENCE = re.compile(r"^\s*```(\w*)")
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FLAG = re.compile(r"^--?([A-Za-z][\w-]*)")
PATH = re.compile(r"(?<![\w./$-])((?:%s)[\w./*{},-]*[\w/*}])" %
                  "|".join(re.escape(d) for d in REPO_DIRS))


def tool_flags(bin_dir, tool):
    exe = os.path.join(bin_dir, tool)
    if not os.path.exists(exe):
        return None
    out = subprocess.run([exe, "--help-hidden"], capture_output=True,
                         text=True, timeout=60).stdout
    flags = set(re.findall(r"^\s+--?([A-Za-z][\w-]*)", out, re.M))
    # LLVM prints `--opt=<value>` and `--opt` alike; also accept the tool's
    # own help/version flags.
    flags.update({"help", "help-hidden", "version", "h"})
    return flags


def own_flags(bin_dir, tool):
    """The flags of the tool's own option categories: every section of its
    `--help` but LLVM's "Generic Options"."""
    exe = os.path.join(bin_dir, tool)
    if not os.path.exists(exe):
        return set()
    out = subprocess.run([exe, "--help"],
                         capture_output=True, text=True, timeout=60).stdout
    flags = set()
    for title, body in re.findall(r"^(\S[^\n]*):\n((?:(?:[ \t]+[^\n]*)?\n)*)",
                                  out, re.M):
        if title in ("OPTIONS", "Generic Options", "USAGE"):
            continue
        flags.update(re.findall(r"^\s+--([A-Za-z][\w-]*)", body, re.M))
    return flags


def check_flags_table(tool, rows, bin_dir, flags_of, where, errors):
    """A table marked `<!-- check-docs: flags-table TOOL -->` lists exactly
    the tool's own flags in its first column."""
    listed = set()
    for number, row in rows:
        first = row.split("|")[1] if row.count("|") >= 2 else ""
        for flag in re.findall(r"`--([A-Za-z][\w-]*)", first):
            listed.add(flag)
            if flag not in (flags_of(tool) or set()):
                errors.append("%s:%d: %s has no flag --%s" %
                              (where, number, tool, flag))
    for flag in sorted(own_flags(bin_dir, tool) - listed):
        errors.append("%s: the %s flag table does not list --%s" %
                      (where, tool, flag))


def split_commands(text):
    """Shell text -> list of (command word, argument tokens)."""
    text = text.replace("\\\n", " ")
    # Usage synopses wrap their `[--flag]` lists onto indented lines.
    text = re.sub(r"\n\s+(?=\[|--)", " ", text)
    for line in text.splitlines():
        line = line.split(" #", 1)[0] if not line.lstrip().startswith("#") \
            else ""
        for part in re.split(r"\|\||&&|[|;]|\$\(|\)", line):
            tokens = part.split()
            # Drop environment assignments and launchers in front of a tool.
            while tokens and ("=" in tokens[0] and not tokens[0].startswith("-")
                              or os.path.basename(tokens[0]) in
                              ("mpiexec", "mpirun", "srun", "env", "time",
                               "sudo", "exec")):
                launcher = os.path.basename(tokens[0])
                tokens = tokens[1:]
                if launcher in ("mpiexec", "mpirun", "srun"):
                    # Skip the launcher's own options up to the program.
                    while tokens and os.path.basename(tokens[0]) not in TOOLS:
                        tokens = tokens[1:]
            if tokens:
                yield os.path.basename(tokens[0]), tokens[1:]


def check_command(tool, args, flags_of, where, errors):
    flags = flags_of(tool)
    if flags is None:
        return
    for arg in args:
        arg = arg.strip("\"'`,[]")
        m = FLAG.match(arg)
        if m and m.group(1) not in flags:
            errors.append("%s: %s has no flag --%s" % (where, tool, m.group(1)))


def check_paths(text, src, where, errors):
    for m in PATH.finditer(text):
        path = m.group(1).rstrip(".")
        if any(c in path for c in "*<>{},") or "NAME" in path:
            continue
        if not os.path.exists(os.path.join(src, path)):
            errors.append("%s: no such file or directory %s" % (where, path))


TABLE_MARK = re.compile(r"^<!-- check-docs: flags-table ([\w-]+) -->")


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"^```.*?^```", "", f.read(), flags=re.M | re.S)
        cache[path] = {slug(h) for h in re.findall(r"^#+\s+(.*)$", text, re.M)}
    return cache[path]


def check_page(path, src, bin_dir, flags_of, errors):
    rel = os.path.relpath(path, src)
    in_block, lang = False, ""
    table_tool, table_rows, table_line = None, [], 0
    block, block_line = [], 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        where = "%s:%d" % (rel, number)
        fence = FENCE.match(line)
        if fence:
            if in_block:
                if lang in ("sh", "bash", "console", "shell"):
                    text = "\n".join(block)
                    for tool, args in split_commands(text):
                        check_command(tool, args, flags_of,
                                      "%s:%d" % (rel, block_line), errors)
                    check_paths(text, src, "%s:%d" % (rel, block_line), errors)
                in_block, block = False, []
            else:
                in_block, lang, block_line = True, fence.group(1), number + 1
            continue
        if in_block:
            block.append(line)
            continue
        mark = TABLE_MARK.match(line)
        if mark:
            table_tool, table_rows, table_line = mark.group(1), [], number
            continue
        if table_tool:
            if line.startswith("|"):
                table_rows.append((number, line))
            elif table_rows or line.strip():
                check_flags_table(table_tool, table_rows, bin_dir, flags_of,
                                  "%s:%d" % (rel, table_line), errors)
                table_tool = None
        for span in INLINE.findall(line):
            words = span.split()
            if words and os.path.basename(words[0]) in TOOLS:
                for tool, args in split_commands(span):
                    check_command(tool, args, flags_of, where, errors)
            check_paths(span, src, where, errors)
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            target, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(path), target)) \
                if target else path
            if not os.path.exists(full):
                errors.append("%s: broken link %s" % (where, target))
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                errors.append("%s: no heading #%s in %s" %
                              (where, anchor, os.path.relpath(full, src)))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-docs.py SOURCE_DIR BIN_DIR")
    src, bin_dir = sys.argv[1], sys.argv[2]
    cache = {}

    def flags_of(tool):
        if tool not in cache:
            cache[tool] = tool_flags(bin_dir, tool)
        return cache[tool]

    pages = [os.path.join(src, "README.md")]
    for root, dirs, files in os.walk(os.path.join(src, "docs")):
        dirs[:] = [d for d in dirs if d != "reference"]
        pages += [os.path.join(root, f) for f in sorted(files)
                  if f.endswith(".md")]
    errors = []
    for page in sorted(pages):
        check_page(page, src, bin_dir, flags_of, errors)
    for error in errors:
        print(error)
    print("check-docs: %d pages, %d problems" % (len(pages), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

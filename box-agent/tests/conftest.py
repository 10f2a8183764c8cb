"""What the box agent's tests share: the agent's files, the agent started as the host starts it
(bootstrap.py on the standard input of `python3 -I -S -c LOADER`, then its modules as a JSON map),
and a git repository standing in for /workspace, with every module's ROOT pointed at it."""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.dirname(HERE)
PACKAGE = os.path.join(AGENT, "drydock_box")
sys.path.insert(0, AGENT)

from drydock_box import channel, files, fork, gitutil, restore, tree, watch  # noqa: E402, F401

MODULES = [channel, files, fork, gitutil, restore, tree, watch]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def agent_sources():
    """The modules as the host sends them (src/sandbox/box-agent.ts): path -> source."""
    return {os.path.relpath(path, AGENT): read(path) for path in sorted(glob.glob(os.path.join(PACKAGE, "*.py")))}


def agent_input(sources=None):
    """The two lines the host writes before any request."""
    return (json.dumps(read(os.path.join(AGENT, "bootstrap.py"))) + "\n"
            + json.dumps(agent_sources() if sources is None else sources) + "\n").encode()


LOADER = read(os.path.join(AGENT, "loader.py")).strip()


def start_agent(python=None, sources=None, **popen):
    """The agent as box-channel.ts starts it; its input already holds the bootstrap and modules."""
    proc = subprocess.Popen([python or sys.executable, "-I", "-S", "-c", LOADER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)
    proc.stdin.write(agent_input(sources))
    proc.stdin.flush()
    return proc


def pythons():
    """This interpreter, and the oldest and newest python3 found on this machine (pyenv's or on
    PATH) that the agent claims to run on: 3.6 or later."""
    found = {}
    candidates = glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))
    candidates += glob.glob("/usr/bin/python3.*") + glob.glob("/usr/local/bin/python3.*")
    for path in candidates:
        match = re.search(r"python(?:3\.(\d+))?$|versions/3\.(\d+)", path)
        if not match or not os.access(path, os.X_OK) or path.endswith("-config"):
            continue
        minor = int(match.group(1) or match.group(2))
        if minor >= 6:
            found.setdefault(minor, path)
    chosen = {"this": sys.executable}
    if found:
        chosen["3.%d" % min(found)] = found[min(found)]
        chosen["3.%d" % max(found)] = found[max(found)]
    return chosen


def run_git(cwd, *args, **kw):
    env = dict(os.environ)
    env.update(kw.pop("env", {}))
    return subprocess.run(["git"] + list(args), cwd=cwd, env=env, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, **kw).stdout


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home of the test's own: no git config of the machine's decides what the agent's gits do."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        monkeypatch.delenv(key, raising=False)
    for key, value in (("NAME", "test"), ("EMAIL", "test@localhost")):
        monkeypatch.setenv("GIT_AUTHOR_" + key, value)
        monkeypatch.setenv("GIT_COMMITTER_" + key, value)
    return path


@pytest.fixture
def workspace(tmp_path, home, monkeypatch):
    """A repository with a commit, as /workspace: every module's ROOT (and what is made of it)
    names it for the test."""
    root = tmp_path / "workspace"
    root.mkdir()
    run_git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    (root / "src").mkdir()
    (root / "src" / "b.py").write_text("print('b')\n")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "base")
    run_git(root, "update-ref", "refs/drydock/base", "HEAD")
    broot = os.fsencode(str(root))
    for module in MODULES:
        if hasattr(module, "ROOT"):
            monkeypatch.setattr(module, "ROOT", broot)
        if hasattr(module, "AGENT_INDEX"):
            monkeypatch.setattr(module, "AGENT_INDEX", broot + b"/.git/index")
    return root


CHECKPOINT_REFS, KEEP_REFS, BASE_REF = "refs/drydock/checkpoints", "refs/drydock/keep", "refs/drydock/base"


def git_out(root, *args, **kw):
    return run_git(root, *args, **kw).decode().strip()


def script_save(root, index, slot):
    """A checkpoint as the save's script makes it (src/workspace/checkpoint-script.ts, `save`, without
    ignored files): (commit, bytes, files), its refs written."""
    env = {"GIT_INDEX_FILE": str(index)}
    base = git_out(root, "rev-parse", BASE_REF)
    if not os.path.exists(str(index)):
        run_git(root, "read-tree", base, env=env)
    run_git(root, "add", "-A", env=env)
    w = git_out(root, "write-tree", env=env)
    refs = []
    for line in git_out(root, "for-each-ref", "--format=%(objectname) %(refname) %(symref)").split("\n"):
        sha, ref, sym = (line.split(" ") + [""])[:3]
        if line and not ref.startswith("refs/drydock/") and not sym:
            refs.append("%s %s" % (sha, ref))
    refs_text = "\n".join(refs)
    head = (root / ".git" / "HEAD").read_text().split("\n")[0]

    def blob(text):
        return git_out(root, "hash-object", "-w", "--no-filters", "--stdin", input=text.encode())
    entries = "040000 tree %s\tw\n100644 blob %s\th\n100644 blob %s\tr\n" % (w, blob(head), blob(refs_text))
    index_bytes = 0
    agent_index = root / ".git" / "index"
    if agent_index.exists():
        index_bytes = agent_index.stat().st_size
        i = git_out(root, "hash-object", "-w", "--no-filters", str(agent_index))
        entries += "100644 blob %s\ti\n100644 blob %s\tm\n" % (i, blob("%d\n" % int(agent_index.stat().st_mtime)))
    t = git_out(root, "mktree", input=entries.encode())
    k = git_out(root, "commit-tree", t, "-p", base, "-m", "drydock checkpoint")
    files = changed = 0
    for line in git_out(root, "diff-tree", "-r", "--no-renames", base, w).split("\n"):
        if not line:
            continue
        _, mode, _, sha, status = line.split("\t")[0][1:].split(" ")
        files += 1
        if mode != "160000" and status[0] in "AMT":
            changed += int(git_out(root, "cat-file", "-s", sha))
    updates = "update %s/%s %s\n" % (CHECKPOINT_REFS, slot, k)
    seen = []
    for line in refs:
        sha = line.split(" ")[0]
        if sha not in seen:
            seen.append(sha)
            updates += "update %s/%s/%d %s\n" % (KEEP_REFS, slot, len(seen), sha)
    run_git(root, "update-ref", "--stdin", input=updates.encode())
    return k, changed + index_bytes + len(refs_text.encode()), files


def tree_of_files(root, tmp_path):
    """The tree `git add -A` and `write-tree` make of the working tree now, with an index of their own."""
    env = {"GIT_INDEX_FILE": str(tmp_path / "fresh-index")}
    if os.path.exists(env["GIT_INDEX_FILE"]):
        os.unlink(env["GIT_INDEX_FILE"])
    run_git(root, "read-tree", BASE_REF, env=env)
    run_git(root, "add", "-A", env=env)
    return git_out(root, "write-tree", env=env)

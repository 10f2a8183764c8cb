"""When the agent was one Python namespace (its parts joined as strings), a name defined at the top
level of two parts was no error: the later one silently replaced the earlier for every caller, as
a `feed(fd, data)` once did the channel's `feed(proc, data)` (a git then waited 30 s for input that
never ended). Now each module is a module of its own, imported by name, so that cannot happen
(the second test shows it); the first still holds every top-level name to one module, so a reader
never has to ask which `feed` a line means. ruff's F811 catches a name defined twice in one module."""
import ast
import glob
import os
import subprocess
import sys

from conftest import AGENT, PACKAGE, read


def top_level_names(path):
    """Functions, classes and assigned names at a module's top level (not what it imports)."""
    names = set()
    for node in ast.parse(read(path), path).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
    return names


def test_no_two_modules_define_the_same_top_level_name():
    where = {}
    for path in sorted(glob.glob(os.path.join(PACKAGE, "*.py"))) + [os.path.join(AGENT, "bootstrap.py")]:
        for name in top_level_names(path):
            where.setdefault(name, []).append(os.path.relpath(path, AGENT))
    assert len(where) > 20
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}


def test_the_check_finds_a_name_defined_in_two_modules(tmp_path):
    (tmp_path / "one.py").write_text("def feed(proc, data):\n    pass\nX = 1\n")
    (tmp_path / "two.py").write_text("def feed(fd, data):\n    pass\nY, (X, Z) = 1, (2, 3)\n")
    one, two = top_level_names(str(tmp_path / "one.py")), top_level_names(str(tmp_path / "two.py"))
    assert one & two == {"feed", "X"}


def test_modules_cannot_collide_since_each_is_its_own_namespace(tmp_path):
    # Two modules with the same top-level name, imported as the agent's are (from memory, by the
    # bootstrap's finder): each caller gets its own module's.
    sys.path.insert(0, AGENT)
    try:
        import bootstrap
    finally:
        sys.path.remove(AGENT)
    finder = bootstrap._Sources({
        "pkg/__init__.py": "",
        "pkg/a.py": "def feed():\n    return 'a'\ndef call():\n    return feed()\n",
        "pkg/b.py": "from .a import call\ndef feed():\n    return 'b'\ndef both():\n    return call(), feed()\n",
    })
    sys.meta_path.insert(0, finder)
    try:
        from pkg import b
        assert b.both() == ("a", "b")
    finally:
        sys.meta_path.remove(finder)
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[name]


def test_every_module_imports_alone():
    # (A module that leaned on a name another module defined would fail here, on its own.)
    for path in sorted(glob.glob(os.path.join(PACKAGE, "*.py"))):
        name = os.path.basename(path)[:-3]
        if name in ("__main__", "__init__"):
            continue
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, %r); "
                               "import drydock_box.%s" % (AGENT, name)], stderr=subprocess.PIPE)
        assert proc.returncode == 0, proc.stderr.decode()

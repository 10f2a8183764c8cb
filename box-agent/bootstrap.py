"""The first thing the box agent runs in a box: the host starts `python3 -I -S -c "$(cat loader.py)"`,
whose one line reads this file's source as the first line of its standard input (JSON) and runs
it. This then reads the box agent's sources as the second line, `{"drydock_box/channel.py": "…", …}`,
and imports them as the package drydock_box from memory: nothing is written into the box, so no
file the agent in the box made (the box user owns /workspace and /tmp) can stand in for a module. Then it
runs drydock_box.channel.main() on the same standard input and output, or, when python3's
arguments after -c are `relay PORT`, drydock_box.relay.relay_main() (src/sandbox/stream-relay.ts).

It first makes the process not dumpable (PR_SET_DUMPABLE 0), before anything else is read: other
processes of the box user cannot then open /proc/<pid>/fd of this one to write into the channel
or read the requests. With -I (isolated: no PYTHON* variables, no user site, no script directory
on sys.path) and -S (no site), and the finder first on sys.meta_path, no file of the box decides
what the box agent's modules are. Python 3.6 or later (json.loads of bytes, as loader.py does).
"""
import sys


def _not_dumpable():
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


class _Sources:
    """A meta path finder and loader of the modules whose sources came on standard input."""

    def __init__(self, files):
        # module name -> (file name, source, whether a package)
        self.modules = {}
        for path, source in files.items():
            name = path[:-3].replace("/", ".")
            package = name.endswith(".__init__")
            if package:
                name = name[:-len(".__init__")]
            self.modules[name] = ("<%s>" % path, source, package)

    def find_spec(self, name, path=None, target=None):
        found = self.modules.get(name)
        if found is None:
            return None
        from importlib.machinery import ModuleSpec
        return ModuleSpec(name, self, origin=found[0], is_package=found[2])

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        filename, source, _ = self.modules[module.__name__]
        exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)


def _boot():
    _not_dumpable()
    import json
    files = json.loads(sys.stdin.buffer.readline())
    sys.meta_path.insert(0, _Sources(files))
    # python3 -c CODE ARG…: sys.argv is ["-c", ARG…].
    if sys.argv[1:2] == ["relay"]:
        from drydock_box.relay import relay_main
        relay_main(sys.argv[2:])
        return
    from drydock_box.channel import main
    main()


# (loader.py runs this file in the namespace of python3 -c, whose name is __main__; a test imports
# it under another name to look at _Sources alone.)
if __name__ == "__main__":
    _boot()

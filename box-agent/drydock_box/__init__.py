"""drydock's box agent: the program at the box end of a box channel (src/sandbox/box-channel.ts).

One module per concern, each importing what it needs:
  channel   the request loop: runs each request's argv as a child, answers with its output
  watch     inotify of /workspace: which paths changed since the diff's index was last updated
  gitutil   git as the box agent runs it, and git's loose objects and config as it reads them
  tree      the tree writer: a checkpoint's save without its script
  restore   a checkpoint's restore without its script
  fork      a fork's export and import, beside the restore
  files     reading a regular file without blocking on what the agent put in its place
  relay     a listener in the box whose connections drydock carries to the gateway or egress proxy

Standard library only, Python 3.6 or later: it runs on any image with python3. The host sends the
sources on the channel's standard input and bootstrap.py (beside this folder) imports them from
memory; nothing is written into the box.
"""

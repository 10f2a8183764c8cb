import sys,json;exec(json.loads(sys.stdin.buffer.readline()))

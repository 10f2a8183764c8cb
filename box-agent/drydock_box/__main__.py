"""`python3 -m drydock_box`: the box agent on this process's standard input and output, as in a box
(bootstrap.py starts it the same way, from sources the host sends); `python3 -m drydock_box relay
PORT` is the stream relay (relay.py)."""
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["relay"]:
        from drydock_box.relay import relay_main
        relay_main(sys.argv[2:])
    else:
        from drydock_box.channel import main
        main()

"""`python3 -m drydock_box`: the box agent on this process's standard input and output, as in a box
(bootstrap.py starts it the same way, from sources the host sends)."""
from drydock_box.channel import main

if __name__ == "__main__":
    main()

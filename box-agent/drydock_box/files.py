"""Reading a file of the box the agent may have replaced with something that blocks."""
import os
import stat as stat_


# At most limit bytes of a regular file, or None: a FIFO the agent put in its place would block
# the reader (and, under the watch's lock, every request after it) for good.
def read_regular(path, limit):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat_.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(65536, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)

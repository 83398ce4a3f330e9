"""The numbered values of a trace: each buffer a recorded call passed to the device's
library, once, with its kind (trace.py lists them) and the memory it spans.

A kernel is often handed a pointer into a buffer rather than the buffer (a view's elements
from its offset), so each value keeps its address range: a pointer found in one is that
value at a byte offset, which a replay adds to the buffer it has for the value.
"""
import bisect


class Values:
    def __init__(self, device):
        self.device = device
        self.objects, self.kinds = [], []       # per value: its buffer (or int), its kind
        self.by_id, self.starts, self.ranges = {}, [], []

    def register(self, buffer, kind):
        """The value of ``buffer``, numbered now with ``kind`` if it is new."""
        v = self.by_id.get(id(buffer))
        if v is not None:
            return v
        v = self._add(buffer, kind)
        self.by_id[id(buffer)] = v
        start = self.device.address(buffer)
        i = bisect.bisect_right(self.starts, start)
        self.starts.insert(i, start)
        self.ranges.insert(i, (start + self.device.extent(buffer), v))
        return v

    def scalar(self, number):
        """A value that is an int, not memory (a live call's random seed)."""
        return self._add(number, "scalar")

    def _add(self, obj, kind):
        self.objects.append(obj)
        self.kinds.append(kind)
        return len(self.objects) - 1

    def locate(self, pointer):
        """(value, byte offset) of a pointer argument: a buffer registered, a pointer into
        one, or a buffer the device says it can read in place (registered static); None for
        memory never seen."""
        v = self.by_id.get(id(pointer))
        if v is not None:
            return v, 0
        address = self.device.address(pointer)
        i = bisect.bisect_right(self.starts, address) - 1
        if i >= 0 and address < self.ranges[i][0]:
            return self.ranges[i][1], address - self.starts[i]
        owner = self.device.owner(pointer)
        if owner is not None:
            return self.register(owner, "static"), address - self.device.address(owner)
        return None

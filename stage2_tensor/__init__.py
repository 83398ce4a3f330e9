"""stage2_tensor: a pure-Python strided tensor with tensor-level autograd (thesis chapters 1, 2
and 4). Not written yet: see the stage2 issue."""

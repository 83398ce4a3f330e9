"""torch.linalg: ``import stage2_tensor.linalg`` or ``tg.linalg``."""
from ..products import cross as _cross
from .checks import LinAlgError
from .lu import det, inv, logdet, slogdet, solve
from .triangular import solve_triangular

__all__ = ["LinAlgError", "det", "inv", "slogdet", "solve", "solve_triangular"]

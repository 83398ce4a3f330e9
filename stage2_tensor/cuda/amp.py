"""``torch.cuda.amp``, the older spelling of torch.amp: GradScaler."""
from ..amp import GradScaler

__all__ = ["GradScaler"]

"""The schedules' checks of whole-number settings (steps, epochs, milestones); real-number
settings use the optimizers' check_number."""
import numbers


def check_count(where, key, value, low=1):
    """ValueError unless ``value`` is a whole number >= low (bools are not counts)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{where}: invalid {key} {value!r}, expected a whole number >= {low}")

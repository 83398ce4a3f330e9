"""The kernel specification: every kernel a device provides, declared once (chapter on native
kernels, "the backend boundary").

ops.py declares the element-wise primitives, whose kernels (``unary``, ``binary``, ``reduce``)
take an op by name. Every other kernel is declared here, one function each, in the modules
of this package by family: its name is the function's, its parameters the function's (each
annotated with its kind, below), its docstring what it computes, and its body what the
kernel may assume about its arguments: it raises ValueError (TypeError for a wrong type),
naming the kernel, the argument and the shapes, when they do not fit, and otherwise returns
the (shape, dtype) of each output buffer, None for one it will not make. The decorator
``kernel`` says the rest: the outputs' names, whether the kernel covers float32 and float64
only, works in place, and how its C function takes its arguments (``native``).

From these declarations follow, by name:
- the checks every native device runs before handing views to C (``check``), and the python
  device where a loop would otherwise stop at the shorter view;
- lazy execution's recording: which methods record a node, which run in place, and each
  node's output shapes, with no list of its own (the lazy device of the next stage);
- the native devices' calls of ``tg_NAME`` and ``tg_cuda_NAME`` for the kernels that declare
  ``native``, and those functions' C declarations, which the native build writes from here;
- the interface a reader looks up: ``python -m stage2_tensor.kernels`` prints it, as
  Markdown;
- the tests' list of kernels (tests/engines.py) and the kernels a device lacks.

Parameter kinds (a trailing "?" allows None):
    view     a View read through its strides      dense    a View the kernel reads row-major
    index    a View of int64 indices              views    a list of Views, one per parameter
    op       an op name of ops.py                 dim      a dimension, normalized
    dims     distinct dimensions, normalized      ints     a tuple of ints
    int      an int                               float    a number
    bool     a bool                               bools    a tuple of bools
    floats   a tuple of numbers                   choice   one of a few names
    dtype    the dtype the kernel computes in     shape    a tuple of extents
    numbers  a list of Python numbers             bytes    a block of bytes
    array    a numpy array
"""
import importlib
import inspect

FAMILIES = ("storage", "pointwise", "reductions", "ordering", "products", "indexing", "losses",
            "normalization", "recurrent", "random", "windows", "resampling", "updates")
KIND_NAMES = ("view", "dense", "index", "views", "op", "dim", "dims", "ints", "int", "float", "bool", "bools", "floats",
              "choice", "dtype", "shape", "numbers", "bytes", "array")
# How a kernel meets the data: "compute" makes new buffers from views (lazy records it),
# "in" and "out" move data between Python and the device, "in_place" writes into views it
# is given, "into" writes a result into a destination view (the inference compiler's)
ROLES = ("compute", "in", "out", "in_place", "into")
# The c_dtypes of a kernel the C library has for every dtype a tensor computes in
ANY_DTYPE = ("bool", "int32", "int64", "float32", "float64")
KERNELS = {}


class Kernel:
    """One kernel's declaration (see the module docstring)."""

    def __init__(self, infer, family, returns, role, float_only, halves, optional, native, sizes, c_dtypes,
                 fails):
        self.name = infer.__name__
        self.infer = infer
        self.family = family
        names = returns.replace(",", " ").split()
        self.returns = tuple(name.rstrip("?") for name in names)
        self.maybe_none = frozenset(name.rstrip("?") for name in names if name.endswith("?"))
        self.role = role
        self.float_only = float_only
        self.halves = halves
        self.optional = optional
        self.native = native
        self.sizes = sizes
        self.c_dtypes = c_dtypes
        self.fails = fails
        self.doc = inspect.getdoc(infer) or ""
        self.params = tuple((p.name, p.annotation, p.default is not inspect.Parameter.empty)
                            for p in inspect.signature(infer).parameters.values())
        self.native_args = tuple(_c_parameter(text) for text in native.split(",")) if native else ()
        for name, kind, _ in self.params:
            if kind.rstrip("?") not in KIND_NAMES:
                raise ValueError(f"kernel {self.name}: parameter {name} has no kind of KIND_NAMES: {kind!r}")

    @property
    def recorded(self):
        """Whether a lazy device records it as a node (it computes new buffers from views)."""
        return self.role == "compute"

    @property
    def multiple(self):
        """Whether it returns a tuple of buffers."""
        return len(self.returns) > 1

    def check(self, *args):
        """Raise unless the arguments fit (the declaration's body)."""
        self.infer(*args)

    def signature(self):
        return f"{self.name}({', '.join(name for name, _, _ in self.params)})"

    def __repr__(self):
        return f"<kernel {self.signature()}>"


def _c_parameter(text):
    """(C type, name) of one parameter of a C declaration: "const T *x" -> ("const T *", "x")."""
    text = text.strip()
    name = text.split()[-1].lstrip("*")
    return text[:len(text) - len(name)].strip(), name


def kernel(returns="out", *, role="compute", float_only=False, halves=False, optional=False, native=None,
           sizes=None, c_dtypes=None, fails=False):
    """Declare the decorated function as a kernel.

    returns     the outputs' names ("" for a kernel that returns none), "?" after one the
                kernel may return as None
    role        one of ROLES
    float_only  its native versions cover float32 and float64; a native device runs other
                dtypes on the python device
    halves      it takes float16 and bfloat16 views itself (the storage kernels); every other
                kernel computes on float32 copies (backend.py, "Half precision")
    optional    the python device has none: a device without it runs stage2's composite
    native      the C function's parameters after any dtype, as C: each named after a
                parameter (passed as its kind says), an output (a new buffer, NULL for
                None) or an entry of ``sizes(*args)`` (computed from the arguments)
    c_dtypes    the dtypes the C library has it for (default: float32 and float64)
    fails       the C function returns 1 when it could not allocate its tables
    """
    def declare(infer):
        family = infer.__module__.rsplit(".", 1)[-1]
        declared = Kernel(infer, family, returns, role, float_only, halves, optional, native, sizes,
                          c_dtypes, fails)
        if declared.name in KERNELS:
            raise ValueError(f"kernel {declared.name} is declared twice")
        KERNELS[declared.name] = declared
        return declared
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    return declare


def check(name, *args):
    """The check of kernel ``name`` on its arguments: raises when they do not fit."""
    KERNELS[name].infer(*args)


def outputs(name, args):
    """The (shape, dtype) of each buffer kernel ``name`` returns for ``args`` (checked)."""
    return KERNELS[name].infer(*args)


def names(*roles, **flags):
    """The kernels' names in declaration order, of the given roles (all when none is given)
    and with the given flags (``optional=True``, ``float_only=True``...)."""
    return tuple(k.name for k in KERNELS.values()
                 if (not roles or k.role in roles) and all(getattr(k, f) == v for f, v in flags.items()))


def interface():
    """The interface a device implements, as Markdown (``python -m stage2_tensor.kernels``)."""
    lines = ["# The kernels a device provides",
             "",
             "Generated from the declarations in stage2_tensor/kernels/ by `python -m stage2_tensor.kernels`:",
             "do not edit. Outputs are new contiguous buffers unless the kernel works in place or into a",
             "destination. `dense` views are read row-major (a native device copies one that is not);",
             "`?` marks a parameter that may be None. The element-wise ops that `unary`, `binary` and",
             "`reduce` take are declared in ops.py.",
             ""]
    for family in FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        lines += [f"## {family}", "", inspect.getdoc(module), ""]
        for k in KERNELS.values():
            if k.family != family:
                continue
            params = ", ".join(f"{name}: {kind}" for name, kind, _ in k.params)
            returns = f" -> {', '.join(r + '?' * (r in k.maybe_none) for r in k.returns)}" if k.returns else ""
            flags = [flag for flag, on in (("in place", k.role == "in_place"), ("into a destination", k.role == "into"),
                                           ("float32 and float64 natively", k.float_only),
                                           ("half views", k.halves), ("optional", k.optional)) if on]
            lines += [f"### `{k.name}({params}){returns}`", ""]
            if flags:
                lines += [f"*{'; '.join(flags)}*", ""]
            lines += [k.doc, ""]
    return "\n".join(lines)


for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")

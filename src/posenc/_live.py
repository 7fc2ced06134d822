"""Live views: the one mechanism behind every read-only view of a registry that follows it
(a method registered after the view was made appears in it).

:class:`LiveTuple` is a tuple of names recomputed from a function on every use;
:class:`LiveMapping` maps those names to a value computed from each. Pure Python (no torch,
no numpy), so a torch-free module (the figure style) can hold one too. The views themselves
are where their registry is: :data:`posenc.nn.POSITION_METHODS` (registration order),
:data:`posenc.catalogue.METHOD_ORDER` (the course's), :data:`posenc.compare.METHODS`,
:data:`posenc.compare.PARAMETER_SCOPE`, :data:`posenc.course.figures.style.METHOD_COLORS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

__all__ = ["LiveTuple", "LiveMapping"]


class LiveTuple(Sequence):
    """A read-only tuple of the names ``names()`` gives, asked afresh on every use; equal
    to any sequence of the same names."""

    def __init__(self, names: Callable[[], Iterable[str]]):
        self._source = names

    def _names(self) -> tuple[str, ...]:
        return tuple(self._source())

    def __getitem__(self, index):
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name) -> bool:
        return name in self._names()

    def __eq__(self, other) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None  # it changes as the registry does

    def __repr__(self) -> str:
        return repr(self._names())


class LiveMapping(Mapping):
    """A read-only mapping ``name -> value(name)`` over the names ``keys`` holds (a
    :class:`LiveTuple`, or a function giving the names), both looked up on every use;
    ``KeyError`` for a name not among them."""

    def __init__(self, keys: Sequence[str] | Callable[[], Iterable[str]],
                 value: Callable[[str], object]):
        self._keys = keys if isinstance(keys, Sequence) else LiveTuple(keys)
        self._value = value

    def __getitem__(self, name):
        if name not in self._keys:
            raise KeyError(name)
        return self._value(name)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._keys))

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return repr(dict(self))
